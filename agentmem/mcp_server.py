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
from collections.abc import Awaitable
from datetime import datetime
from typing import Annotated, Any, Literal

from google.protobuf import json_format
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import ToolAnnotations
from pydantic import AfterValidator, Field, ValidationError
from pydantic_core import PydanticCustomError

import agentmem
from agentmem import mcp_confirm, mcp_http
from agentmem.client import AsyncClient
from agentmem.client_errors import ApiError, PermissionDenied, Unauthenticated
from agentmem.core import listen as listening
from agentmem.core import validation
from agentmem.core.errors import AgentmemError, FieldViolation, Reason
from agentmem.mcp_schemas import output_schema
from agentmem.v1 import (
    facts_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)

INSTRUCTIONS = (
    "agentmem stores what the user wants remembered. Only save a memory when the user asks "
    "you to remember something, or confirms when you ask; never save ordinary statements on "
    "your own. Search or ask before answering questions about the user."
)
SaveIntent = Literal["explicit_user_request", "user_confirmed", "client_auto_save"]
Mode = Literal["enabled", "disabled"]
ClassificationName = Literal["active", "cold"]
StateName = Literal[
    "eligible",
    "cold",
    "pending_review",
    "rejected",
    "revoked",
    "assent_invalid",
    "assent_expired",
    "erased",
]


def _identifier(required: bool) -> AfterValidator:
    """The gateway's own id rule (`agentmem.core.validation.identifier`), checked here too
    so an MCP client learns which argument is wrong in the same words."""

    def check(value: str) -> str:
        try:
            return validation.identifier("id", value, required=required)
        except AgentmemError as e:
            rule = e.violations[0].description if e.violations else "is invalid"
            raise PydanticCustomError("invalid_identifier", rule) from None

    return AfterValidator(check)


SourceId = Annotated[str, Field(description="a source id (src_…)"), _identifier(True)]
Revision = Annotated[int, Field(description="the revision you last read (compare-and-swap)")]
ThreadId = Annotated[
    str, Field(description="the conversation thread (optional)"), _identifier(False)
]
RequiredThreadId = Annotated[str, Field(description="the conversation thread"), _identifier(True)]
AsOf = Annotated[
    datetime | None,
    Field(description="as it was at this time (ISO 8601, e.g. 2024-06-01); default: now"),
]

# Which catalog reason an invalid argument maps to (default INVALID_FIELD).
FIELD_REASONS = {"save_intent": Reason.SAVE_INTENT_INVALID}
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _write(title: str, destructive: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=False,
        open_world_hint=False,
    )


def _read(title: str) -> ToolAnnotations:
    return READ.model_copy(update={"title": title, "idempotent_hint": True})


def _violation(error: dict[str, Any]) -> FieldViolation:
    """What was wrong with an argument, in words of our own: never the rejected value."""
    field = ".".join(str(p) for p in error["loc"]) or "arguments"
    kind = error.get("type", "")
    expected = (error.get("ctx") or {}).get("expected")
    if kind == "missing":
        return FieldViolation(field, "is required")
    if kind in ("literal_error", "enum") and expected:
        return FieldViolation(field, f"must be one of {expected}")
    if kind.startswith("int"):
        return FieldViolation(field, "must be an integer")
    if kind.startswith("string"):
        return FieldViolation(field, "must be a string")
    if kind == "invalid_identifier":
        return FieldViolation(field, str(error.get("msg", "is invalid")))
    if kind == "extra_forbidden":
        return FieldViolation(field, "is not an argument of this tool")
    return FieldViolation(field, "is invalid")


def catalog_error(error: ValidationError) -> str:
    violations = tuple(_violation(e) for e in error.errors())
    reasons = {FIELD_REASONS.get(v.field, Reason.INVALID_FIELD) for v in violations}
    reason = reasons.pop() if len(reasons) == 1 else Reason.INVALID_FIELD
    return str(AgentmemError(reason, violations=violations))


class MemoryMCPServer(MCPServer):
    """MCPServer whose argument errors come from the error catalog, without echo."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
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
    """Checks each HTTP request's bearer token against the gateway (GetCapabilities)."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            await self._client.with_token(token).get_capabilities(timeout=10)
        except (Unauthenticated, PermissionDenied):
            return None
        except ApiError:
            return None  # the gateway cannot vouch for it now: refuse
        # The token itself is never logged; its hash names the principal to the MCP layer.
        digest = hashlib.sha256(token.encode()).hexdigest()[:16]
        return AccessToken(token=token, client_id=f"agentmem-{digest}", scopes=[])


def _request_token(ctx: Context) -> str | None:
    request = getattr(ctx.request_context, "request", None)
    user = request.scope.get("user") if request is not None else None
    access = getattr(user, "access_token", None) or get_access_token()
    return access.token if access is not None else None


def build(
    client: AsyncClient,
    *,
    http_auth: AuthSettings | None = None,
    confirm_timeout: float = mcp_confirm.DEFAULT_TIMEOUT,
) -> MCPServer:
    """`confirm_timeout`: seconds the user has to answer the host's "Save this memory?"."""
    server = MemoryMCPServer(
        "agentmem",
        instructions=INSTRUCTIONS,
        version=agentmem.__version__,
        auth=http_auth,
        token_verifier=GatewayTokenVerifier(client) if http_auth else None,
    )

    def caller(ctx: Context) -> AsyncClient:
        if http_auth is None:
            return client
        token = _request_token(ctx)
        if not token:  # RequireAuthMiddleware lets no such request through
            raise ToolError(str(AgentmemError(Reason.UNAUTHENTICATED)))
        return client.with_token(token)

    async def call(pending: Awaitable[Any]) -> dict[str, Any]:
        try:
            response = await pending
        except ApiError as e:
            raise ToolError(e.explain()) from None
        return json_format.MessageToDict(response, preserving_proto_field_name=True)

    def tool(description: str, annotations: ToolAnnotations, response: Any):  # type: ignore[no-untyped-def]
        def register(fn):  # type: ignore[no-untyped-def]
            server.add_tool(fn, description=description, annotations=annotations)
            registered = server._tool_manager.get_tool(fn.__name__)
            registered.fn_metadata.output_schema = output_schema(response.DESCRIPTOR)
            registered.__dict__.pop("output_schema", None)  # a cached_property
            return fn

        return register

    @tool(
        "Save a memory about the user. Call ONLY when the user explicitly asks you to remember "
        "something (save_intent='explicit_user_request'), confirms when you ask "
        "('user_confirmed'), or has turned on auto-save ('client_auto_save'). Do NOT call for "
        "ordinary statements made in conversation. save_intent_source names your client; "
        "save_intent_evidence is a short non-sensitive note, never prompt history. "
        "Where your host can ask the user, the user is asked to confirm before anything is "
        "stored.",
        _write("Save a memory"),
        sources_pb2.InsertMemoryResponse,
    )
    async def memory_insert(
        ctx: Context,
        content: Annotated[str, Field(description="what to remember")],
        save_intent: SaveIntent | None = None,
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        thread_id: ThreadId = "",
        request_id: Annotated[str, Field(description="makes a retry return the first result")] = "",
    ) -> dict[str, Any]:
        gateway = caller(ctx)
        given = mcp_confirm.Intent(save_intent or "", save_intent_source, save_intent_evidence)
        intent = await mcp_confirm.settle(ctx, gateway, content, given, confirm_timeout)
        return await call(
            gateway.insert_memory(
                content=content,
                save_intent=intent.save_intent,
                save_intent_source=intent.source,
                save_intent_evidence=intent.evidence,
                thread_id=thread_id,
                request_id=request_id,
            )
        )

    @tool(
        "Search the user's memories (only those allowed for retrieval).",
        _read("Search memories"),
        retrieval_pb2.SearchMemoriesResponse,
    )
    async def memory_search(
        ctx: Context, query: str, limit: int = 5, thread_id: ThreadId = ""
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).search_memories(query=query, limit=limit, thread_id=thread_id)
        )

    @tool(
        "Answer a question about the user from remembered facts and memories, with provenance.",
        _read("Ask memory"),
        facts_pb2.AskResponse,
    )
    async def memory_ask(
        ctx: Context, question: str, token_budget: int = 300, as_of: AsOf = None
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).ask(question=question, token_budget=token_budget, as_of=as_of)
        )

    @tool(
        "Explain which memories a query selects and why others are filtered "
        "(ids and reasons only, no text).",
        _read("Explain retrieval"),
        retrieval_pb2.ExplainRetrievalResponse,
    )
    async def memory_explain(
        ctx: Context, query: str, limit: int = 5, thread_id: ThreadId = ""
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).explain_retrieval(query=query, limit=limit, thread_id=thread_id)
        )

    @tool(
        "List memory sources (metadata only).",
        _read("List sources"),
        sources_pb2.ListSourcesResponse,
    )
    async def memory_sources_list(
        ctx: Context,
        page_size: int = 50,
        page_token: str = "",
        classification: ClassificationName | None = None,
        effective_state: StateName | None = None,
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).list_sources(
                page_size=page_size,
                page_token=page_token,
                classification=classification,
                effective_state=effective_state,
            )
        )

    @tool(
        "List memories waiting for review.",
        _read("List pending memories"),
        review_pb2.ListMemoriesResponse,
    )
    async def memory_pending_list(
        ctx: Context, page_size: int = 50, page_token: str = ""
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).list_memories(
                status_filter="pending_review", page_size=page_size, page_token=page_token
            )
        )

    @tool(
        "Approve a pending memory. Only on the user's own decision.",
        _write("Approve a pending memory"),
        review_pb2.ReviewMemoryResponse,
    )
    async def memory_pending_approve(
        ctx: Context, source_id: SourceId, expected_revision: Revision
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).review_memory(
                source_id=source_id, decision="approve", expected_revision=expected_revision
            )
        )

    @tool(
        "Reject a pending memory: it is never retrieved.",
        _write("Reject a pending memory", destructive=True),
        review_pb2.ReviewMemoryResponse,
    )
    async def memory_pending_reject(
        ctx: Context, source_id: SourceId, expected_revision: Revision
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).review_memory(
                source_id=source_id, decision="reject", expected_revision=expected_revision
            )
        )

    @tool(
        "Search facts extracted from the user's memories: the current ones; as_of gives those "
        "current at that time, include_superseded every value with its dates.",
        _read("Search facts"),
        facts_pb2.SearchFactsResponse,
    )
    async def memory_fact_search(
        ctx: Context,
        query: str = "",
        save_intent_source: str = "",
        save_intent: SaveIntent | None = None,
        as_of: AsOf = None,
        include_superseded: bool = False,
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).search_facts(
                query=query,
                save_intent_source=save_intent_source,
                save_intent=save_intent or "",
                as_of=as_of,
                include_superseded=include_superseded,
            )
        )

    @tool(
        "The user's profile, consolidated from remembered facts (as it is now, or as_of).",
        _read("Profile"),
        facts_pb2.GetProfileResponse,
    )
    async def memory_profile_get(
        ctx: Context, save_intent_source: str = "", as_of: AsOf = None
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).get_profile(save_intent_source=save_intent_source, as_of=as_of)
        )

    @tool(
        "Retract a remembered fact the user says is wrong: the value before it becomes "
        "current again; the memory stays. Only on the user's own word.",
        _write("Retract a fact", destructive=True),
        facts_pb2.RetractFactResponse,
    )
    async def memory_fact_retract(
        ctx: Context,
        fact_id: Annotated[str, Field(description="the fact id (fact_…)")],
        reason: Annotated[str, Field(description="why (optional, not stored)")] = "",
    ) -> dict[str, Any]:
        return await call(caller(ctx).retract_fact(fact_id=fact_id, reason=reason))

    @tool(
        "Read a thread's memory mode (enabled or disabled).",
        _read("Thread memory mode"),
        thread_mode_pb2.ReadThreadMemoryModeResponse,
    )
    async def memory_thread_mode_get(ctx: Context, thread_id: RequiredThreadId) -> dict[str, Any]:
        return await call(caller(ctx).read_thread_memory_mode(thread_id=thread_id))

    @tool(
        "Enable or disable memory for a thread (compare-and-swap on expected_revision; "
        "0 for a thread never set).",
        _write("Set thread memory mode"),
        thread_mode_pb2.SetThreadMemoryModeResponse,
    )
    async def memory_thread_mode_set(
        ctx: Context, thread_id: RequiredThreadId, mode: Mode, expected_revision: Revision
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).set_thread_memory_mode(
                thread_id=thread_id, mode=mode, expected_revision=expected_revision
            )
        )

    @tool(
        "Mark a source active or cold (cold: kept but never retrieved).",
        _write("Classify a source"),
        sources_pb2.SetSourceClassificationResponse,
    )
    async def memory_source_classify(
        ctx: Context,
        source_id: SourceId,
        classification: ClassificationName,
        expected_revision: Revision,
    ) -> dict[str, Any]:
        return await call(
            caller(ctx).set_source_classification(
                source_id=source_id,
                classification=classification,
                expected_revision=expected_revision,
            )
        )

    return server


def run(
    address: str,
    token: str,
    transport: str,
    host: str,
    port: int,
    experimental: list[str] | None = None,
    confirm_timeout: float = mcp_confirm.DEFAULT_TIMEOUT,
) -> None:
    if transport == "stdio":
        client = AsyncClient(address, token, experimental=experimental)
        build(client, confirm_timeout=confirm_timeout).run("stdio")
        return
    # HTTP: no server credential; each request's own bearer token is used.
    try:
        listening.ensure_free(f"{host}:{port}", "MCP server")
    except listening.AddressInUse as e:
        listening.refuse(e)
    client = AsyncClient(address, "", experimental=experimental)
    auth = AuthSettings(issuer_url=f"http://{host}:{port}", resource_server_url=None)
    mcp_http.serve(build(client, http_auth=auth, confirm_timeout=confirm_timeout), host, port)
