"""The one error catalog: every error a caller can see, with its status and stable reason.

Domain code raises `AgentmemError(Reason.X, ...)`; the gRPC adapter
(`agentmem.contract.grpc_errors`) turns it into a status with `google.rpc.ErrorInfo`. Public
messages are fixed per reason and never carry payload text, tokens or credentials; `detail`
goes to the log only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

DOMAIN = "agentmem"


class Reason(StrEnum):
    REVISION_MISMATCH = "REVISION_MISMATCH"
    CONCURRENT_MODIFICATION = "CONCURRENT_MODIFICATION"
    SAVE_INTENT_REQUIRED = "SAVE_INTENT_REQUIRED"
    SAVE_INTENT_INVALID = "SAVE_INTENT_INVALID"
    INVALID_FIELD = "INVALID_FIELD"
    THIN_POINTER_REQUIRED = "THIN_POINTER_REQUIRED"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    MISSING_SCOPE = "MISSING_SCOPE"
    CAPABILITY_DISABLED = "CAPABILITY_DISABLED"
    EXPERIMENTAL_NOT_ENABLED = "EXPERIMENTAL_NOT_ENABLED"
    THREAD_MEMORY_DISABLED = "THREAD_MEMORY_DISABLED"
    ASSENT_MISSING = "ASSENT_MISSING"
    ASSENT_INVALID = "ASSENT_INVALID"
    ASSENT_EXPIRED = "ASSENT_EXPIRED"
    ASSENT_REVOKED = "ASSENT_REVOKED"
    ASSENT_STALE = "ASSENT_STALE"
    NOT_FOUND = "NOT_FOUND"
    NOT_PENDING_REVIEW = "NOT_PENDING_REVIEW"
    SELF_APPROVAL_DENIED = "SELF_APPROVAL_DENIED"
    APPROVAL_REQUIRES_PERSON = "APPROVAL_REQUIRES_PERSON"
    SAVE_NOT_CONFIRMED = "SAVE_NOT_CONFIRMED"
    SOURCE_REVOKED = "SOURCE_REVOKED"
    SOURCE_ERASED = "SOURCE_ERASED"
    REPLAYED_SOURCE_NOT_ACTIVE = "REPLAYED_SOURCE_NOT_ACTIVE"
    EVENTS_COMPACTED = "EVENTS_COMPACTED"
    SUBSCRIBER_TOO_SLOW = "SUBSCRIBER_TOO_SLOW"
    RATE_LIMITED = "RATE_LIMITED"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"
    INVALID_PAGE_TOKEN = "INVALID_PAGE_TOKEN"
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    # A start-up error of any server, never an RPC's: its listening address is taken.
    ADDRESS_IN_USE = "ADDRESS_IN_USE"
    FACT_RETRACTED = "FACT_RETRACTED"
    USER_PRINCIPAL_REQUIRED = "USER_PRINCIPAL_REQUIRED"
    STORAGE_FULL = "STORAGE_FULL"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    IDENTITY_PROVIDER_UNAVAILABLE = "IDENTITY_PROVIDER_UNAVAILABLE"
    RESUME_POINT_AHEAD = "RESUME_POINT_AHEAD"


@dataclass(frozen=True)
class Entry:
    status: str  # a grpc.StatusCode name; the domain stays free of grpc
    message: str


CATALOG: dict[Reason, Entry] = {
    Reason.REVISION_MISMATCH: Entry(
        "FAILED_PRECONDITION", "expected_revision does not match the current revision"
    ),
    Reason.CONCURRENT_MODIFICATION: Entry(
        "ABORTED", "the change conflicted with a concurrent change; retry it"
    ),
    Reason.SAVE_INTENT_REQUIRED: Entry(
        "INVALID_ARGUMENT",
        "memory insert requires metadata.save_intent when memory.insert_policy is "
        "require_save_intent",
    ),
    Reason.SAVE_INTENT_INVALID: Entry(
        "INVALID_ARGUMENT",
        "metadata.save_intent must be explicit_user_request, user_confirmed or client_auto_save",
    ),
    Reason.INVALID_FIELD: Entry("INVALID_ARGUMENT", "the request has an invalid field"),
    Reason.THIN_POINTER_REQUIRED: Entry(
        "INVALID_ARGUMENT", "a foreign source may carry a thin pointer only"
    ),
    Reason.UNAUTHENTICATED: Entry("UNAUTHENTICATED", "missing or invalid credential"),
    Reason.MISSING_SCOPE: Entry("PERMISSION_DENIED", "the credential lacks a required scope"),
    Reason.CAPABILITY_DISABLED: Entry(
        "UNIMPLEMENTED", "this capability is disabled on this server"
    ),
    Reason.EXPERIMENTAL_NOT_ENABLED: Entry(
        "FAILED_PRECONDITION",
        "this capability is experimental on this server: opt in by naming it in the "
        "request metadata entry agentmem-experimental",
    ),
    Reason.THREAD_MEMORY_DISABLED: Entry(
        "FAILED_PRECONDITION", "memory is disabled for this thread"
    ),
    Reason.ASSENT_MISSING: Entry("PERMISSION_DENIED", "the canonical owner's assent is missing"),
    Reason.ASSENT_INVALID: Entry("PERMISSION_DENIED", "the assent does not verify"),
    Reason.ASSENT_EXPIRED: Entry("PERMISSION_DENIED", "the assent has expired"),
    Reason.ASSENT_REVOKED: Entry("PERMISSION_DENIED", "the assent or the source was revoked"),
    Reason.ASSENT_STALE: Entry(
        "PERMISSION_DENIED", "the assent no longer matches the content or the owner's keys"
    ),
    Reason.NOT_FOUND: Entry("NOT_FOUND", "not found"),
    Reason.NOT_PENDING_REVIEW: Entry(
        "FAILED_PRECONDITION", "only a memory pending review can be approved or rejected"
    ),
    Reason.SELF_APPROVAL_DENIED: Entry(
        "PERMISSION_DENIED", "an agent cannot approve a memory it inserted itself"
    ),
    # A held memory (or, without memory.allow_service_review, a service's review of any).
    Reason.APPROVAL_REQUIRES_PERSON: Entry(
        "PERMISSION_DENIED",
        "only a person (a user principal) may approve or reject this memory "
        "(why it waits: hold in ErrorInfo)",
    ),
    # The MCP server asked the user through the host before saving, and got no yes.
    Reason.SAVE_NOT_CONFIRMED: Entry(
        "FAILED_PRECONDITION", "the user did not confirm saving this memory; nothing was stored"
    ),
    # A retried insert (same request_id) whose source was since revoked, erased, rejected,
    # made cold...: its first result is no longer true.
    Reason.REPLAYED_SOURCE_NOT_ACTIVE: Entry(
        "FAILED_PRECONDITION",
        "request_id names an earlier insert whose source is no longer active (state, "
        "source_id and revision in ErrorInfo); nothing was inserted",
    ),
    Reason.SOURCE_REVOKED: Entry(
        "FAILED_PRECONDITION",
        "the source was revoked; only a new insert (or a new admission) can bring its content back",
    ),
    Reason.SOURCE_ERASED: Entry("FAILED_PRECONDITION", "the source was erased"),
    Reason.EVENTS_COMPACTED: Entry(
        "OUT_OF_RANGE", "the resume point is older than the retained event log"
    ),
    Reason.SUBSCRIBER_TOO_SLOW: Entry(
        "RESOURCE_EXHAUSTED", "the subscriber fell too far behind; resume from the last sequence"
    ),
    Reason.RATE_LIMITED: Entry(
        "RESOURCE_EXHAUSTED", "request rate limit reached; retry after the delay in RetryInfo"
    ),
    Reason.QUOTA_EXCEEDED: Entry("RESOURCE_EXHAUSTED", "a quota of this tenant is used up"),
    Reason.UNAVAILABLE: Entry("UNAVAILABLE", "the service is unavailable; retry"),
    Reason.INTERNAL: Entry("INTERNAL", "internal error"),
    Reason.INVALID_PAGE_TOKEN: Entry(
        "INVALID_ARGUMENT", "page_token is not a token this server issued for this query"
    ),
    Reason.MALFORMED_REQUEST: Entry(
        "INVALID_ARGUMENT", "the request is not a well-formed message of this method"
    ),
    Reason.MESSAGE_TOO_LARGE: Entry(
        "RESOURCE_EXHAUSTED", "the message exceeds the size limit (limit_bytes in ErrorInfo)"
    ),
    Reason.ADDRESS_IN_USE: Entry("UNAVAILABLE", "the address is already in use"),
    Reason.FACT_RETRACTED: Entry("FAILED_PRECONDITION", "the fact was already retracted"),
    Reason.USER_PRINCIPAL_REQUIRED: Entry(
        "PERMISSION_DENIED", "only a user (not an agent or a service) may do this"
    ),
    Reason.STORAGE_FULL: Entry(
        "RESOURCE_EXHAUSTED", "the database has no room left; nothing was changed"
    ),
    Reason.TOKEN_EXPIRED: Entry(
        "UNAUTHENTICATED", "the credential expired; reconnect with a fresh one"
    ),
    Reason.IDENTITY_PROVIDER_UNAVAILABLE: Entry(
        "UNAVAILABLE",
        "the identity provider's signing keys could not be fetched; retry after the delay "
        "in RetryInfo",
    ),
    Reason.RESUME_POINT_AHEAD: Entry(
        "OUT_OF_RANGE",
        "after_sequence is past the head of the event log (head_sequence in ErrorInfo)",
    ),
}


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


@dataclass
class AgentmemError(Exception):
    """A caller-visible error. `metadata` and `violations` must be free of user content."""

    reason: Reason
    metadata: dict[str, str] = field(default_factory=dict)
    violations: tuple[FieldViolation, ...] = ()
    detail: str = ""  # for the log only
    # Seconds after which a retry can succeed (sent as google.rpc.RetryInfo), if known.
    retry_after: float | None = None

    def __post_init__(self) -> None:
        super().__init__(self.reason.value)

    @property
    def entry(self) -> Entry:
        return CATALOG[self.reason]

    @property
    def message(self) -> str:
        if self.violations:
            return f"{self.entry.message}: " + "; ".join(
                f"{v.field}: {v.description}" for v in self.violations
            )
        return self.entry.message

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.message}"


def invalid_field(field_name: str, description: str) -> AgentmemError:
    return AgentmemError(
        Reason.INVALID_FIELD, violations=(FieldViolation(field_name, description),)
    )


def revision_mismatch(target: str, current_revision: int) -> AgentmemError:
    return AgentmemError(
        Reason.REVISION_MISMATCH,
        metadata={"current_revision": str(current_revision), "target": target},
    )
