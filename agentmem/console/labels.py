"""Words for a person: enum values, explanation reasons and the service's refusals."""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.client.values import ProtoEnum, enum_names
from agentmem.console import parts
from agentmem.v1 import common_pb2, retrieval_pb2, sources_pb2

REASONS = {
    retrieval_pb2.REASON_SELECTED: "selected",
    retrieval_pb2.REASON_BELOW_LIMIT: "matched, but below the result limit",
    retrieval_pb2.REASON_COLD: "filtered: the source is cold",
    retrieval_pb2.REASON_PENDING_REVIEW: "filtered: waiting for your review",
    retrieval_pb2.REASON_REJECTED: "filtered: you rejected it",
    retrieval_pb2.REASON_REVOKED: "filtered: the source was revoked",
    retrieval_pb2.REASON_ASSENT_INVALID: "filtered: the owner's assent is not valid",
    retrieval_pb2.REASON_ASSENT_EXPIRED: "filtered: the owner's assent has expired",
    retrieval_pb2.REASON_THREAD_MEMORY_DISABLED: "filtered: memory is disabled for this thread",
}

# What the page says when the service refuses, by ErrorInfo reason.
REFUSALS = {
    "SELF_APPROVAL_DENIED": (
        "The service refused: an agent may not approve a memory it inserted itself "
        "(separation of duties). Sign in with your own key to review it."
    ),
    "APPROVAL_REQUIRES_PERSON": (
        "The service refused: only a person may approve or reject this memory, and this key "
        "is an agent's or a service's. Sign in with your own key to review it."
    ),
    "MISSING_SCOPE": (
        "The service refused: your key does not grant the scope this action needs ({scope})."
    ),
    "REVISION_MISMATCH": (
        "Someone changed this since you loaded the page (now at revision {current_revision}). "
        "Nothing was changed; look at the current state and decide again."
    ),
    "NOT_PENDING_REVIEW": "This memory is no longer waiting for review.",
    "SOURCE_REVOKED": "This source was revoked; it can no longer change.",
    "SOURCE_ERASED": "This source was erased; it can no longer change.",
    "NOT_FOUND": "Not found: it may have been erased, or it is not yours.",
    "UNAUTHENTICATED": "Your key is no longer accepted. Sign in again.",
    "CAPABILITY_DISABLED": "This server has that feature ({capability}) switched off.",
    "INVALID_FIELD": "The service refused the request: {message}",
    "THREAD_MEMORY_DISABLED": "Memory is disabled for that thread.",
    "UNAVAILABLE": "The memory service is unavailable right now; try again shortly.",
    "RATE_LIMITED": "Too many requests for now; try again shortly.",
}

HTTP_STATUS = {
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
    "FAILED_PRECONDITION": 409,
    "ABORTED": 409,
    "NOT_FOUND": 404,
    "INVALID_ARGUMENT": 400,
    "OUT_OF_RANGE": 400,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
    "UNIMPLEMENTED": 501,
}


def refusal(reason: str, message: str, metadata: dict[str, str]) -> str:
    template = REFUSALS.get(reason)
    if template is None:
        return f"The service refused ({reason})."
    values = {"scope": "", "current_revision": "?", "capability": "", **metadata}
    return template.format(message=message, **values)


def enum(enum_type: ProtoEnum, value: int) -> str:
    """`CLASSIFICATION_COLD` → `cold`; unknown or unset → `unspecified`."""
    try:
        name = enum_type.Name(value)
    except ValueError:
        return "unknown"
    if name.endswith("_UNSPECIFIED"):
        return "unspecified"
    for p in _PREFIXES:
        if name.startswith(p):
            return name.removeprefix(p).lower()
    return name.lower()


_PREFIXES = (
    "CLASSIFICATION_",
    "STATUS_",
    "EFFECTIVE_RETRIEVAL_STATE_",
    "SOURCE_KIND_",
    "MEMORY_MODE_",
    "INSERT_POLICY_",
    "REASON_",
)


def words(value: str) -> str:
    return value.replace("_", " ")


def filters() -> dict[str, list[str]]:
    """The choices the sources page offers, from the enums themselves."""

    return {
        "state": enum_names(sources_pb2.EffectiveRetrievalState, "EFFECTIVE_RETRIEVAL_STATE_"),
        "classification": enum_names(sources_pb2.Classification, "CLASSIFICATION_"),
        "status": enum_names(sources_pb2.Status, "STATUS_"),
        "kind": enum_names(sources_pb2.SourceKind, "SOURCE_KIND_"),
    }


def when(ts: Timestamp | None) -> str:
    """A protobuf Timestamp as UTC to the second, or "—" when unset."""
    if ts is None or not (ts.seconds or ts.nanos):
        return "—"
    return ts.ToDatetime().strftime("%Y-%m-%d %H:%M:%S UTC")


TEMPLATE_HELPERS: dict[str, Callable[..., object]] = {
    "conversation_parts": parts.parts,
    "words": words,
    "when": when,
    "enum_status": lambda v: enum(sources_pb2.Status, v),
    "enum_classification": lambda v: enum(sources_pb2.Classification, v),
    "enum_state": lambda v: enum(sources_pb2.EffectiveRetrievalState, v),
    "enum_kind": lambda v: enum(sources_pb2.SourceKind, v),
    "enum_mode": lambda v: enum(common_pb2.MemoryMode, v),
}
