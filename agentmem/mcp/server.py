"""`agentmem mcp`: memory tools for MCP clients, each a thin call of one public RPC.

Every call goes through the gateway with a caller's credential, so the insert policy,
scopes, classification, assent and audit are exactly those of the gRPC API: this server
holds no policy and no state of its own. Over stdio it acts with AGENTMEM_TOKEN. Over
streamable HTTP every request must carry `Authorization: Bearer <token>`; the token is
checked against the gateway on each request and the tools act with it, so each MCP client
is its own principal. Errors are the catalog's (reason + fixed message), never an echo of
the arguments.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

import agentmem
from agentmem.client import AsyncClient, person_credential
from agentmem.client.errors import ApiError, PermissionDenied, Unauthenticated
from agentmem.mcp import confirm as mcp_confirm
from agentmem.mcp import http as mcp_http
from agentmem.mcp import session_tools as mcp_session_tools
from agentmem.mcp import tools as mcp_tools
from agentmem.mcp.arguments import catalog_error
from agentmem.mcp.toolbox import Toolbox
from agentmem.process import listen as listening

log = logging.getLogger("agentmem.mcp")
INSTRUCTIONS = (
    "agentmem stores what the user wants remembered. Only save a memory when the user asks "
    "you to remember something, or confirms when you ask; never save ordinary statements on "
    "your own. Search or ask before answering questions about the user."
)


class MemoryMCPServer(MCPServer):
    """MCPServer whose argument errors come from the error catalog, without echo."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._tool_manager.get_tool(name) is None:  # a protocol error, as the spec says
            raise MCPError(INVALID_PARAMS, "Unknown tool")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # the SDK's generic message; details stay in the log
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(catalog_error(e.__cause__)) from None
            # our own ToolError, with the catalog reason first
            raise ToolError(str(e).removeprefix(f"Error executing tool {name}: ")) from None


class GatewayTokenVerifier:
    """Checks each HTTP request's bearer token against the gateway (GetCapabilities); a
    person's is refused unless `allow_person` (`agentmem.client.person_credential`)."""

    def __init__(self, client: AsyncClient, allow_person: bool = False) -> None:
        self._client = client
        self._allow_person = allow_person

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            capabilities = await self._client.with_token(token).get_capabilities(timeout=10)
        except (Unauthenticated, PermissionDenied):
            return None
        except ApiError:
            return None  # the gateway cannot vouch for it now: refuse
        if person_credential.is_person(capabilities) and not self._allow_person:
            log.warning(person_credential.refusal("a request's bearer token"))
            return None
        # The token itself is never logged; its hash names the principal to the MCP layer.
        digest = hashlib.sha256(token.encode()).hexdigest()[:16]
        return AccessToken(token=token, client_id=f"agentmem-{digest}", scopes=[])


def build(
    client: AsyncClient,
    *,
    http_auth: AuthSettings | None = None,
    confirm_timeout: float = mcp_confirm.DEFAULT_TIMEOUT,
    allow_person: bool = False,
) -> MCPServer:
    """`confirm_timeout`: seconds the user has to answer the host's "Save this memory?";
    `allow_person`: act with a person's credential all the same (else refused)."""
    server = MemoryMCPServer(
        "agentmem",
        instructions=INSTRUCTIONS,
        version=agentmem.__version__,
        auth=http_auth,
        token_verifier=GatewayTokenVerifier(client, allow_person) if http_auth else None,
    )
    toolbox = Toolbox(server, client, http_auth is not None, confirm_timeout, allow_person)
    mcp_tools.register(toolbox)
    mcp_session_tools.register(toolbox)
    return server


def run(
    address: str,
    token: str,
    transport: str,
    host: str,
    port: int,
    experimental: list[str] | None = None,
    confirm_timeout: float = mcp_confirm.DEFAULT_TIMEOUT,
    oidc_issuer: str | None = None,
    allow_person: bool = False,
) -> None:
    """`oidc_issuer` (HTTP): the issuer the gateway accepts tokens of. With it, a 401 names
    the protected-resource metadata (RFC 9728) that points MCP clients to the issuer."""
    if transport == "stdio":
        client = AsyncClient(address, token, experimental=experimental)
        build(client, confirm_timeout=confirm_timeout, allow_person=allow_person).run("stdio")
        return
    # HTTP: no server credential; each request's own bearer token is used.
    try:
        listening.ensure_free(f"{host}:{port}", "MCP server")
    except listening.AddressInUse as e:
        listening.refuse(e)
    client = AsyncClient(address, "", experimental=experimental)
    own = f"http://{host}:{port}"
    auth = AuthSettings.model_validate(  # from strings: the issuer kept exactly as given
        {
            "issuer_url": oidc_issuer or own,
            "resource_server_url": f"{own}/mcp" if oidc_issuer else None,
        }
    )
    server = build(
        client, http_auth=auth, confirm_timeout=confirm_timeout, allow_person=allow_person
    )
    mcp_http.serve(server, host, port)
