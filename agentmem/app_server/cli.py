"""`agentmem app-server`: serve the memory API as JSON-RPC to Codex-style hosts, and
generate the protocol's JSON Schemas and TypeScript types."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from agentmem.app_server.wire import Limits
from agentmem.client import numbers, person_credential
from agentmem.client.commands import SubParsers
from agentmem.client.settings import ENV_ADDRESS, ENV_TOKEN
from agentmem.process import listen, logs

if TYPE_CHECKING:
    from agentmem.app_server.gateway import Gateway

# The serving libraries (asyncio, the gateway's client, websockets) and yaml are imported
# by the function that needs them: `agentmem --help` and the other commands skip them.

log = logging.getLogger("agentmem.app_server")
DEFAULT_LIMITS = Limits()


def add_parser(sub: SubParsers) -> None:
    p = sub.add_parser(
        "app-server",
        help="serve the memory API to Codex-style hosts: JSON-RPC on stdio or WebSocket",
        description=__doc__,
    )
    p.add_argument(
        "--listen",
        default="stdio://",
        help="stdio:// (default: JSON Lines on stdin/stdout) or ws://HOST:PORT",
    )
    p.add_argument(
        "--addr",
        default=os.environ.get(ENV_ADDRESS, "127.0.0.1:50051"),
        help=f"gateway address (env {ENV_ADDRESS}; https://HOST:PORT for TLS)",
    )
    p.add_argument("--token", help=f"stdio: the credential to act with (default: env {ENV_TOKEN})")
    p.add_argument("--port-file", help="ws: write the bound port here once listening")
    p.add_argument(
        "--max-message-bytes",
        type=numbers.within(1, 2**31 - 1),
        default=DEFAULT_LIMITS.max_message_bytes,
        help="largest message (line or frame) accepted",
    )
    p.add_argument(
        "--max-in-flight",
        type=numbers.within(1, 2**31 - 1),
        default=DEFAULT_LIMITS.max_in_flight,
        help="requests one connection may have unanswered (-32001 beyond)",
    )
    p.add_argument(
        "--log-level", default="WARNING", help="JSON log lines on stderr from this level"
    )
    p.add_argument(person_credential.FLAG, action="store_true", help=person_credential.FLAG_HELP)
    p.set_defaults(func=serve)
    # Two forms: serving (no generator named), or one generator; usage shows both, the
    # serving form first (scripts/cli_reference.py lists it from this first line).
    serving = p.format_usage().removeprefix("usage: ").rstrip()
    p.usage = f"{serving}\n       %(prog)s {{generate-json-schema,generate-ts}} --out OUT ..."
    generators = p.add_subparsers(
        dest="generator",
        metavar="GENERATOR",
        title="generators (instead of serving)",
        prog=p.prog,
    )
    for name, what in (
        ("generate-json-schema", "JSON Schemas"),
        ("generate-ts", "TypeScript types"),
    ):
        g = generators.add_parser(name, help=f"write the protocol's {what} into --out")
        g.add_argument("--out", required=True, help="directory to write into")
        g.add_argument(
            "--experimental",
            action="store_true",
            help="include the methods of experimental capabilities",
        )
        g.add_argument(
            "--config",
            help="whose capability settings say what is experimental (default: built-in)",
        )
        g.set_defaults(func=generate)


def generate(args: argparse.Namespace) -> int:
    from agentmem.app_server import schemas, typescript  # the models: made on first use

    try:
        section = capability_section(args.config) if args.config else None
    except ValueError as e:
        print(f"agentmem: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if args.generator == "generate-ts":
        written = typescript.write(out, args.experimental, section)
    else:
        written = schemas.write_json(out, args.experimental, section)
    print(f"wrote {len(written)} files to {out}")
    return 0


def capability_section(path: str) -> dict[str, object]:
    """The `capabilities:` section of a service configuration file ({} when it has none)."""
    import yaml

    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as e:
        raise ValueError(f"cannot read config file {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"config file {path} is not valid YAML: {e}") from None
    section = raw.get("capabilities") if isinstance(raw, dict) else None
    if not isinstance(section, dict | None):
        raise ValueError(f"config file {path}: capabilities must be a mapping")
    return dict(section or {})


def serve(args: argparse.Namespace) -> int:
    import asyncio

    limits = Limits(max_message_bytes=args.max_message_bytes, max_in_flight=args.max_in_flight)
    target = urlsplit(args.listen)
    if target.scheme not in ("stdio", "ws") or (target.scheme == "ws" and not target.hostname):
        print("agentmem: --listen takes stdio:// or ws://HOST:PORT", file=sys.stderr)
        return 2
    logs.configure("app-server", args.log_level.upper())
    allow_person = person_credential.allowed(args.allow_person_credential)
    if target.scheme == "stdio":
        token = args.token if args.token is not None else os.environ.get(ENV_TOKEN, "")
        if not token:
            print(f"agentmem: set {ENV_TOKEN} (or --token) to your credential", file=sys.stderr)
            return 2
        return asyncio.run(_stdio(args.addr, token, limits, allow_person))
    host, port = target.hostname or "", target.port or 0
    try:
        sock = listen.bind(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", "app-server")
    except listen.AddressInUse as e:
        listen.refuse(e)
    return asyncio.run(_websocket(args.addr, sock, limits, args.port_file, allow_person))


async def _stdio(address: str, token: str, limits: Limits, allow_person: bool) -> int:
    from agentmem.app_server import stdio

    gateway = _gateway(address, token)
    try:
        if not allow_person and await _a_persons(gateway):
            refused = person_credential.refusal(f"{ENV_TOKEN} (or --token)")
            print(f"agentmem: {refused}", file=sys.stderr)
            return 2
        await stdio.serve(gateway, limits, allow_person=allow_person)
    finally:
        await gateway.close()
    return 0


async def _a_persons(gateway: Gateway) -> bool:
    """Whether the credential is a person's, asked once at start. A gateway that does not
    answer yet leaves it to `initialize`, which asks again."""
    import asyncio

    from agentmem.client.errors import ApiError

    try:
        return person_credential.is_person(
            await asyncio.wait_for(gateway.capabilities(), timeout=10)
        )
    except (ApiError, TimeoutError):
        return False


async def _websocket(
    address: str, sock: socket.socket, limits: Limits, port_file: str | None, allow_person: bool
) -> int:
    import asyncio

    from agentmem.app_server.websocket import Listener

    gateway = _gateway(address, "")  # each connection acts with its own credential

    def ready(bound: int) -> None:
        log.info("listening", extra={"port": bound})
        if port_file:
            listen.announce(port_file, bound)

    serving = asyncio.create_task(Listener(gateway, limits, allow_person).serve(sock, ready))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        pass
    finally:
        with contextlib.suppress(Exception):
            await gateway.close()
    return 0


def _gateway(address: str, token: str) -> Gateway:
    from agentmem.app_server import gateway

    return gateway.Gateway.connect(address, token)
