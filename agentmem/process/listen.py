"""Every server's listening address: refuse a port in use, with one line and no traceback.

gRPC turns SO_REUSEPORT on by default, so a second server on a taken port binds it too and
the kernel splits new connections between the two processes (two databases answering at
random). Our servers turn it off (`GRPC_SERVER_OPTIONS`) and check the address before they
bind (`ensure_free`); HTTP servers (the console, the MCP server's HTTP transport, the
app-server's WebSocket listener) listen on a socket bound here (`bind`). A taken address
raises `AddressInUse`; the command that started the server turns it into the catalog's
`ADDRESS_IN_USE` line on stderr and exit code `EXIT_ADDRESS_IN_USE` (`refuse`).
"""

from __future__ import annotations

import errno
import socket
import sys
from pathlib import Path
from typing import NoReturn

from agentmem.contract.errors import CATALOG, Reason

# The exit code of a server that could not listen because its address is taken (EADDRINUSE
# on Linux), so that `agentmem up` can tell it from a crash and say nothing more.
EXIT_ADDRESS_IN_USE = 98

# Options every gRPC server of ours is created with.
GRPC_SERVER_OPTIONS: tuple[tuple[str, int], ...] = (("grpc.so_reuseport", 0),)


class AddressInUse(OSError):
    """The address is taken by another listener."""

    def __init__(self, address: str, what: str = "") -> None:
        super().__init__(errno.EADDRINUSE, f"{address} is already in use")
        self.address = address
        self.what = what
        self.fix = ""  # how to choose another address, where the command knows it

    def line(self) -> str:
        """The one line a person sees: the catalog reason, who could not listen, where,
        and how to choose another address."""
        who = f"the {self.what} cannot listen on" if self.what else "cannot listen on"
        fix = f" ({self.fix})" if self.fix else ""
        return f"agentmem: {Reason.ADDRESS_IN_USE}: {who} {self.address}: {_MESSAGE}{fix}"


_MESSAGE = CATALOG[Reason.ADDRESS_IN_USE].message


def split(address: str) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 hosts in brackets) as a host and a port number."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"an address is HOST:PORT, not {address!r}")
    return host.strip("[]"), int(port)


def _candidates(address: str) -> list[tuple[int, tuple[object, ...]]]:
    host, port = split(address)
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    return [(family, sockaddr) for family, _, _, _, sockaddr in infos]


def bind(address: str, what: str = "", backlog: int = 128) -> socket.socket:
    """A listening TCP socket on `address`, without SO_REUSEPORT; `AddressInUse` if taken.
    Port 0 picks a free port (read it back with `getsockname()`)."""
    family, sockaddr = _candidates(address)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "taken"
        sock.bind(sockaddr)
        sock.listen(backlog)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise AddressInUse(address, what) from None
        raise
    sock.setblocking(False)
    return sock


def ensure_free(address: str, what: str = "") -> None:
    """Raises `AddressInUse` if something listens on `address` (for servers that bind it
    themselves, such as gRPC's). Port 0 is always free."""
    if split(address)[1] == 0:
        return
    for family, sockaddr in _candidates(address):
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    raise AddressInUse(address, what) from None
                raise


def refuse(error: AddressInUse) -> NoReturn:
    """Ends the process with the one `ADDRESS_IN_USE` line and `EXIT_ADDRESS_IN_USE`."""
    print(error.line(), file=sys.stderr, flush=True)
    raise SystemExit(EXIT_ADDRESS_IN_USE)


def announce(port_file: str | Path, port: int) -> None:
    """Writes the bound port to `port_file` whole, then renames it into place: whoever waits
    for the file (a supervisor, a test) never reads it empty or half written."""
    path = Path(port_file)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(str(port))
    partial.replace(path)
