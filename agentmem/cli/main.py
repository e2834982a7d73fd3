"""`agentmem`: run the services (up, gateway, runtime) and call them."""

from __future__ import annotations

import argparse
import os
import sys

from agentmem.client.commands import COMMANDS, ENV_ADDRESS, ENV_TOKEN

# A command answers before the libraries other commands need are imported: `--version`
# before any parser is built; the commands other surfaces add through entry points (`mcp`,
# `app-server`, `console`; the service's `up`, …) only when one is chosen or all are
# listed; each command's own libraries (the MCP SDK, starlette, asyncio, yaml, …) inside its
# function. tests/unit/test_cli_imports.py holds this; bench/cli_start.py measures it.

SERVICE_COMMANDS = ("up", "gateway", "runtime")
SERVICE_DISTRIBUTION = "agentmem-service"


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


def parser(installed: bool = True) -> argparse.ArgumentParser:
    """The whole command; `installed=False` leaves out the commands installed distributions
    add through entry points (`mcp`, `app-server`, `console`, the service's `up`, …): for a
    call that chose one of the command line's own."""
    from agentmem.cli import client, rpcs

    p = argparse.ArgumentParser(prog="agentmem", description=__doc__, epilog=ENV_HELP)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if installed:
        from importlib.metadata import entry_points

        # another distribution's first (the service's `up`, …), then the client's surfaces
        for command in sorted(
            entry_points(group=COMMANDS), key=lambda e: (e.module.startswith("agentmem."), e.name)
        ):
            command.load()(sub)
    if installed and not set(SERVICE_COMMANDS) <= sub.choices.keys():
        # the client alone: the service's commands say where they come from
        for name in SERVICE_COMMANDS:
            sub.add_parser(name, help=f"(needs {SERVICE_DISTRIBUTION})").set_defaults(
                func=_needs_the_service
            )
    common = client.add_parsers(sub)
    rpcs.add_parsers(sub, common)
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
    p = parser(installed=False)
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
