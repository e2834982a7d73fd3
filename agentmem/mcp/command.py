"""`agentmem mcp`: the command that serves the MCP tools (added to `agentmem` through the
`agentmem.commands` entry point; the MCP SDK is imported only when the command runs)."""

from __future__ import annotations

import argparse
import os
import sys

from agentmem.client import numbers, person_credential
from agentmem.client.commands import ENV_ADDRESS, ENV_EXPERIMENTAL, ENV_TOKEN, SubParsers

MCP_EXTRA_MISSING = (
    "agentmem mcp needs the client's `mcp` extra, agentmem-client[mcp]: from a checkout, "
    "pip install './client[mcp]' (or pipx install \"$PWD/client[mcp]\"; docs/mcp.md)"
)


def add_parsers(sub: SubParsers) -> None:
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
    mcp.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    token = os.environ.get(ENV_TOKEN, "")
    if args.transport == "stdio" and not token:
        print(f"agentmem: set {ENV_TOKEN} to your credential", file=sys.stderr)
        return 2
    try:
        from agentmem.mcp import server as mcp_server
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "mcp":
            raise
        print(f"agentmem: {MCP_EXTRA_MISSING}", file=sys.stderr)
        return 2
    from agentmem.client import person_credential

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
    from agentmem.client import NO_RETRY, Client, person_credential
    from agentmem.client.errors import ApiError, Unauthenticated

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
