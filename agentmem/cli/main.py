"""`agentmem`: run the services (up, gateway, runtime) and call them."""

from __future__ import annotations

import argparse
import os
import sys

# A command answers before the libraries other commands need are imported: `--version`
# before any parser is built, the service's commands (`up`, …, an entry point that imports
# the launcher) only when one is chosen or all are listed, and each command's own
# libraries (the MCP SDK, starlette, asyncio, yaml, …) inside its function.
# tests/unit/test_cli_imports.py holds this; bench/cli_start.py measures it.

# agentmem.client_settings' names (tests/unit/test_cli_imports.py): that module imports grpc.
ENV_ADDRESS = "AGENTMEM_ADDR"
ENV_TOKEN = "AGENTMEM_TOKEN"
ENV_EXPERIMENTAL = "AGENTMEM_EXPERIMENTAL"

# Where an installed distribution adds commands (the service: `up`, `gateway`, `runtime`):
# each entry point is a function given the subparsers.
COMMANDS = "agentmem.commands"
SERVICE_COMMANDS = ("up", "gateway", "runtime")
SERVICE_DISTRIBUTION = "agentmem-service"
MCP_EXTRA_MISSING = (
    "agentmem mcp needs the client's `mcp` extra, agentmem-client[mcp]: from a checkout, "
    "pip install './client[mcp]' (or pipx install \"$PWD/client[mcp]\"; docs/mcp.md)"
)


def _needs_the_service(args: argparse.Namespace) -> int:
    print(
        f"agentmem: `agentmem {args.command}` runs the services: install {SERVICE_DISTRIBUTION} "
        "(the repository's root) beside this client",
        file=sys.stderr,
    )
    return 2


def _hash_token(args: argparse.Namespace) -> int:
    from agentmem.contract.scopes import token_sha256

    token = sys.stdin.readline().strip() if args.token == "-" else args.token
    print(token_sha256(token))
    return 0


def _mcp(args: argparse.Namespace) -> int:
    token = os.environ.get(ENV_TOKEN, "")
    if args.transport == "stdio" and not token:
        print(f"agentmem: set {ENV_TOKEN} to your credential", file=sys.stderr)
        return 2
    try:
        from agentmem import mcp_server
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "mcp":
            raise
        print(f"agentmem: {MCP_EXTRA_MISSING}", file=sys.stderr)
        return 2
    from agentmem import person_credential

    allow_person = person_credential.allowed(args.allow_person_credential)
    if args.transport == "stdio" and not _token_accepted(
        args.addr, token, args.experimental, allow_person
    ):
        return 2
    mcp_server.run(
        args.addr,
        token,
        args.transport,
        args.host,
        args.port,
        experimental=args.experimental,
        confirm_timeout=args.confirm_timeout,
        oidc_issuer=args.oidc_issuer,
        allow_person=allow_person,
    )
    return 0


def _token_accepted(
    address: str, token: str, experimental: list[str] | None, allow_person: bool
) -> bool:
    """Checks the credential once at start, so a wrong token, or a person's given to a
    host, is said at once, not at the first tool call; a gateway that is not up yet is only
    said (the host may start first; the first tool call checks again)."""
    from agentmem import person_credential
    from agentmem.client import NO_RETRY, Client
    from agentmem.client_errors import ApiError, Unauthenticated

    try:
        with Client(address, token, retry=NO_RETRY, experimental=experimental) as client:
            capabilities = client.get_capabilities(timeout=10)
    except Unauthenticated:
        print(
            f"agentmem: the gateway at {address} does not accept {ENV_TOKEN} (UNAUTHENTICATED):"
            " give the MCP server a valid credential",
            file=sys.stderr,
        )
        return False
    except ApiError as e:
        print(
            f"agentmem: cannot check {ENV_TOKEN} yet ({e.reason or e.status_code.name})",
            file=sys.stderr,
        )
        return True
    if person_credential.is_person(capabilities) and not allow_person:
        print(f"agentmem: {person_credential.refusal(ENV_TOKEN)}", file=sys.stderr)
        return False
    return True


def _console(args: argparse.Namespace) -> int:
    from agentmem.console import missing as console_missing

    missing = console_missing()
    if missing:
        print(f"agentmem: the console cannot start: {missing}", file=sys.stderr)
        return 2
    from agentmem.console import server

    return server.run(
        args.listen,
        args.addr,
        gateway_ca=args.gateway_ca,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        secure_cookies=args.secure_cookies,
        port_file=args.port_file,
    )


ENV_HELP = (
    f"Commands that call the service read {ENV_ADDRESS} (the gateway's HOST:PORT, default "
    f"127.0.0.1:50051; https://HOST:PORT for TLS) and {ENV_TOKEN} (your credential). "
    "They print for people; add --json for scripts."
)


def _with_env_help(p: argparse.ArgumentParser) -> None:
    """Every command that calls the gateway says which environment it reads."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _with_env_help(sub)
        elif action.dest == "addr" and p.epilog is None:
            p.epilog = ENV_HELP


def _version() -> str:
    """The client distribution's version, read from its `NAME-VERSION.dist-info` folder's
    name on sys.path as importlib.metadata finds it, without importing importlib.metadata
    (email, zipfile, … : most of `--version`'s time); that when no such folder is found."""
    from agentmem import DISTRIBUTION

    prefix, suffix = DISTRIBUTION.replace("-", "_") + "-", ".dist-info"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(suffix):
                return name[len(prefix) : -len(suffix)]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


class _Version(argparse.Action):
    """`--version`, its number looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="show program's version number and exit"
        )

    def __call__(self, p: argparse.ArgumentParser, *_: object) -> None:
        p.exit(message=f"agentmem {_version()}\n")


def parser(services: bool = True) -> argparse.ArgumentParser:
    """The whole command; `services=False` leaves out the service's commands (`up`, …),
    whose entry point imports the launcher: for a call that chose another command."""
    from agentmem import person_credential
    from agentmem.app_server import cli as app_server
    from agentmem.cli import client, numbers, rpcs

    p = argparse.ArgumentParser(prog="agentmem", description=__doc__, epilog=ENV_HELP)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    added = []
    if services:
        from importlib.metadata import entry_points

        added = list(entry_points(group=COMMANDS))  # the service's `up`, `gateway`, `runtime`
    for command in added:
        command.load()(sub)
    if services and not added:  # the client alone: the service's commands say where they come from
        for name in SERVICE_COMMANDS:
            sub.add_parser(name, help=f"(needs {SERVICE_DISTRIBUTION})").set_defaults(
                func=_needs_the_service
            )
    common = client.add_parsers(sub)
    rpcs.add_parsers(sub, common)
    mcp = sub.add_parser("mcp", help="serve memory tools to MCP clients (stdio or HTTP)")
    mcp.add_argument(
        "--addr",
        default=os.environ.get(ENV_ADDRESS, "127.0.0.1:50051"),
        help=f"gateway address (env {ENV_ADDRESS})",
    )
    mcp.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (acts with AGENTMEM_TOKEN) or streamable HTTP (each request's bearer "
        "token is checked against the gateway and acts as its own principal)",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP transport: listen address")
    mcp.add_argument(
        "--port", type=numbers.within(*numbers.PORT), default=8765, help="HTTP transport: port"
    )
    mcp.add_argument(
        "--experimental",
        action="append",
        metavar="CAPABILITY",
        help=f"opt in to an experimental capability (repeatable; env {ENV_EXPERIMENTAL})",
    )
    mcp.add_argument(
        "--confirm-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="seconds the user has to answer the host's 'Save this memory?' (clients that "
        "can ask their user); no answer stores nothing",
    )
    mcp.add_argument(
        "--oidc-issuer",
        default=os.environ.get("AGENTMEM_MCP_OIDC_ISSUER") or None,
        metavar="URL",
        help="HTTP transport: the OIDC issuer the gateway accepts tokens of; published as "
        "OAuth protected-resource metadata (RFC 9728) so MCP clients can find it "
        "(env AGENTMEM_MCP_OIDC_ISSUER)",
    )
    mcp.add_argument(person_credential.FLAG, action="store_true", help=person_credential.FLAG_HELP)
    mcp.set_defaults(func=_mcp)
    app_server.add_parser(sub)
    con = sub.add_parser(
        "console", help="serve the web console for people (review, inspect, erase)"
    )
    con.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT to serve on")
    con.add_argument(
        "--addr",
        default=os.environ.get("AGENTMEM_ADDR", "127.0.0.1:50051"),
        help="gateway address (env AGENTMEM_ADDR)",
    )
    con.add_argument("--gateway-ca", help="CA file: reach the gateway over TLS")
    con.add_argument("--tls-cert", help="serve HTTPS with this certificate (cookies become Secure)")
    con.add_argument("--tls-key", help="the certificate's private key")
    con.add_argument(
        "--secure-cookies",
        action="store_true",
        help="mark cookies Secure (behind a proxy that terminates TLS)",
    )
    con.add_argument("--port-file", help="write the bound port here once serving")
    con.set_defaults(func=_console)
    ht = sub.add_parser("hash-token", help="print the sha256 to put in auth.api_keys for a token")
    ht.add_argument("token", help="the token, or - to read it from standard input")
    ht.set_defaults(func=_hash_token)
    _with_env_help(p)
    return p


# Options whose value names a file: any bytes the file system takes will do.
FILE_OPTIONS = frozenset(
    {"file", "messages", "gateway_ca", "tls_cert", "tls_key", "port_file", "out", "config"}
)


def _not_utf8(p: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The first argument of the chosen command whose bytes are not UTF-8 (Python keeps
    them as lone surrogates, which no request can carry), named as its help names it; file
    names and the service's own commands aside."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices and chosen not in SERVICE_COMMANDS:
                found = _not_utf8(action.choices[chosen], args)
                if found:
                    return found
            continue
        if action.dest in FILE_OPTIONS:
            continue
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not _is_utf8(v) for v in values):
            return action.option_strings[-1] if action.option_strings else action.dest
    return None


def _commands(p: argparse.ArgumentParser) -> set[str]:
    return {
        name
        for action in p._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _chosen(argv: list[str]) -> str | None:
    """The command word, when it comes first (no option of the top level takes a value)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:
        print(f"agentmem {_version()}")
        sys.exit(0)
    p = parser(services=False)
    if _chosen(argv) not in _commands(p):  # help, a service's command, or a usage error
        p = parser()
    args = p.parse_args(argv)
    undecodable = _not_utf8(p, args)
    if undecodable:  # a usage error, as argparse's own: said in one line, exit code 2
        print(f"agentmem: argument {undecodable} is not UTF-8 text", file=sys.stderr)
        sys.exit(2)
    try:
        code = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`agentmem export | head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 141
    sys.exit(code)


if __name__ == "__main__":
    main()
