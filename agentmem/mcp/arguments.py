"""What the MCP tools take: argument types with the gateway's own rules, the tools'
annotations, and a refused argument said in the error catalog's words (never its value)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from google.protobuf.message import Message
from mcp_types import ToolAnnotations
from pydantic import AfterValidator, Field, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from agentmem.contract import rpcs, validation
from agentmem.contract.errors import AgentmemError, FieldViolation, Reason
from agentmem.v1 import facts_pb2, review_pb2, sources_pb2

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
    """The gateway's own id rule (`agentmem.contract.validation.identifier`), checked here too
    so an MCP client learns which argument is wrong in the same words."""

    def check(value: str) -> str:
        try:
            return validation.identifier("id", value, required=required)
        except AgentmemError as e:
            rule = e.violations[0].description if e.violations else "is invalid"
            raise PydanticCustomError("invalid_identifier", rule) from None

    return AfterValidator(check)


def whole(message: type[Message], field: str, description: str) -> Any:
    """An integer argument for the request field `field` of `message`: the whole numbers its
    proto type holds (`validation.field_range`), so that one past them is refused as an
    argument, never a request that cannot be built."""
    low, high = validation.field_range(message, field)
    return Annotated[int, Field(ge=low, le=high, description=description)]


SourceId = Annotated[str, Field(description="a source id (src_…)"), _identifier(True)]
# Every request's expected_revision is an int64.
Revision = whole(
    review_pb2.ReviewMemoryRequest,
    "expected_revision",
    "the revision you last read (compare-and-swap)",
)
Limit = Annotated[int, Field(ge=1, le=100, description="how many at most (1 to 100)")]
TokenBudget = whole(facts_pb2.AskRequest, "token_budget", "the answer's budget in tokens")
PageSize = whole(sources_pb2.ListSourcesRequest, "page_size", "items per page (1 to 1000)")
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


def tool_annotations(rpc: str, title: str, destructive: bool = False) -> ToolAnnotations:
    """A tool's hints, from the RPC table's row of the RPC it calls (read-only and
    idempotent); whether a writing tool destroys something is the tool's own (approving and
    rejecting call the same RPC)."""
    row = rpcs.BY_NAME[rpc]
    if row.read_only:
        return READ.model_copy(update={"title": title, "idempotent_hint": row.idempotent})
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=row.idempotent,
        open_world_hint=False,
    )


def _violation(error: ErrorDetails) -> FieldViolation:
    """What was wrong with an argument, in words of our own: never the rejected value."""
    field = ".".join(str(p) for p in error["loc"]) or "arguments"
    kind = error.get("type", "")
    expected = (error.get("ctx") or {}).get("expected")
    if kind == "missing":
        return FieldViolation(field, "is required")
    if kind in ("literal_error", "enum") and expected:
        return FieldViolation(field, f"must be one of {expected}")
    if kind == "greater_than_equal":  # the bound is the tool's, never the value sent
        return FieldViolation(field, f"must be at least {(error.get('ctx') or {}).get('ge')}")
    if kind == "less_than_equal":
        return FieldViolation(field, f"must be at most {(error.get('ctx') or {}).get('le')}")
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
