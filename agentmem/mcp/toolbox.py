"""What every MCP tool uses: who is calling (the server's credential over stdio, the
request's bearer token over HTTP), a call whose failure becomes a catalog `ToolError` (for
the person's decisions, saying who decides and where), and the registration of a tool with
the output schema of its response message."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from google.protobuf.message import Message
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import InputRequiredResult, ToolAnnotations

from agentmem.client import AsyncClient, person_credential
from agentmem.client.errors import ApiError
from agentmem.client.person_decisions import Decision
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.contract.invisible import shown
from agentmem.mcp.schemas import output_schema
from agentmem.mcp.values import to_output


def visible(value: Any) -> Any:
    """A tool's result with every string's invisible characters (bidi controls, zero-width,
    tag characters) written as `U+XXXX`: what reaches the host's model is what a person
    reviewing the call sees."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {k: visible(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible(v) for v in value]
    return value


# A tool's result: JSON, or (memory_insert, 2026-07-28 on) the question for the host's user.
Tool = TypeVar("Tool", bound=Callable[..., Awaitable[dict[str, Any] | InputRequiredResult]])


def request_token(ctx: Context) -> str | None:
    """The bearer token of the HTTP request a tool call came in (None over stdio)."""
    request = getattr(ctx.request_context, "request", None)
    user = request.scope.get("user") if request is not None else None
    access = getattr(user, "access_token", None) or get_access_token()
    token = access.token if access is not None else None
    return token if isinstance(token, str) else None


class Toolbox:
    def __init__(
        self,
        server: MCPServer,
        client: AsyncClient,
        per_request: bool,
        confirm_timeout: float,
        allow_person: bool = False,
    ) -> None:
        self.server = server
        self.client = client
        self.per_request = per_request  # each HTTP request acts with its own bearer token
        self.confirm_timeout = confirm_timeout
        self.allow_person = allow_person  # act with a person's credential all the same
        self._vouched = per_request  # HTTP: the token verifier vouches for each request

    def caller(self, ctx: Context) -> AsyncClient:
        """The client acting for whoever made this tool call."""
        if not self.per_request:
            return self.client
        token = request_token(ctx)
        if not token:  # RequireAuthMiddleware lets no such request through
            raise ToolError(str(AgentmemError(Reason.UNAUTHENTICATED)))
        return self.client.with_token(token)

    async def vouched(self) -> None:
        """Over stdio, once: the server's own credential is not a person's (checked at
        start too, unless the gateway could not be reached then). ToolError otherwise."""
        if self._vouched:
            return
        try:
            capabilities = await self.client.get_capabilities(timeout=10)
        except ApiError as e:
            raise ToolError(e.explain()) from None
        if person_credential.is_person(capabilities) and not self.allow_person:
            raise ToolError(person_credential.refusal("the MCP server's credential"))
        self._vouched = True

    async def call(
        self, pending: Awaitable[Message], decision: Decision | None = None
    ) -> dict[str, Any]:
        """The response as JSON a model can pass back (`mcp_values`); a failure is the
        catalog's words, and for the person's `decision`, who makes it and where."""
        try:
            await self.vouched()
            response = await pending
        except ApiError as e:
            raise ToolError(decision.refused(e) if decision else e.explain()) from None
        finally:
            if inspect.iscoroutine(pending) and pending.cr_frame is not None:
                pending.close()  # refused before it was sent: never sent
        result: dict[str, Any] = visible(to_output(response))
        return result

    def tool(
        self, description: str, annotations: ToolAnnotations, response: type[Message]
    ) -> Callable[[Tool], Tool]:
        """Registers a tool whose result is `response` as JSON, with its output schema."""

        def register(fn: Tool) -> Tool:
            self.server.add_tool(fn, description=description, annotations=annotations)
            registered = self.server._tool_manager.get_tool(fn.__name__)
            if registered is None:
                raise LookupError(f"the tool {fn.__name__} was not registered")
            registered.fn_metadata.output_schema = output_schema(response)
            registered.__dict__.pop("output_schema", None)  # a cached_property
            return fn

        return register
