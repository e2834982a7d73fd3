"""Typed errors for callers of the public API, decoded once from the gRPC status.

Every failed call raises an `ApiError` subclass picked by the ErrorInfo reason (falling back
to the status code), in the manner of google-api-core's `from_grpc_error`. The classes are
also `grpc.RpcError`s, with `code()`, `details()` and `trailing_metadata()`, so code written
against the bare stub keeps working.

    try:
        client.set_thread_memory_mode(thread_id="t1", mode="disabled", expected_revision=3)
    except RevisionMismatch as e:
        print("someone changed it first; now at", e.current_revision)
"""

from __future__ import annotations

import re
from typing import Any

import grpc

from agentmem.contract.grpc_errors import error_info, status_of_call


class ApiError(grpc.RpcError):
    """A call failed. `reason` is the stable ErrorInfo reason (None for a transport failure
    that carries none), `metadata` its key/value details (never memory text or tokens)."""

    status_code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        status_code: grpc.StatusCode | None = None,
        reason: str | None = None,
        metadata: dict[str, str] | None = None,
        violations: tuple[tuple[str, str], ...] = (),
        target: str = "",
        cause: grpc.RpcError | None = None,
    ) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.violations = violations
        self.target = target  # what the call was about, e.g. "source src_1" (ids only)
        self._cause = cause

    # grpc.RpcError / grpc.Call compatibility
    def code(self) -> grpc.StatusCode:
        return self.status_code

    def details(self) -> str:
        return self.message

    def trailing_metadata(self) -> tuple[Any, ...]:  # grpc's (key, value) metadata items
        return self._cause.trailing_metadata() if self._cause is not None else ()

    def __str__(self) -> str:
        return self.explain()

    def explain(self) -> str:
        """One line for a person: the reason, what it was about, the fields at fault, and
        what to do next (also what `str()` gives)."""
        head = self.reason or self.status_code.name
        text = f"{head}: {self.message}" if self.message else head
        fields = "; ".join(f"{f}: {d}" for f, d in self.violations if f not in text)
        about = f" ({self.target})" if self.target and self.target not in text else ""
        return text + (f" [{fields}]" if fields else "") + about


# One subclass per status code and per ErrorInfo reason a caller may want to catch on its own.


class InvalidArgument(ApiError):
    status_code = grpc.StatusCode.INVALID_ARGUMENT


class SaveIntentRequired(InvalidArgument):
    pass


class SaveIntentInvalid(InvalidArgument):
    pass


class InvalidPageToken(InvalidArgument):
    pass


class FailedPrecondition(ApiError):
    status_code = grpc.StatusCode.FAILED_PRECONDITION


class RevisionMismatch(FailedPrecondition):
    """The `expected_revision` was stale: nothing changed. Read again and decide."""

    @property
    def current_revision(self) -> int | None:
        value = self.metadata.get("current_revision", "")
        return int(value) if value.lstrip("-").isdigit() else None

    def explain(self) -> str:
        about = f" of {self.target}" if self.target else ""
        return (
            f"{self.reason}: the expected revision{about} is stale; "
            f"the current revision is {self.current_revision}"
        )


class ThreadMemoryDisabled(FailedPrecondition):
    pass


class NotPendingReview(FailedPrecondition):
    pass


class ExperimentalNotEnabled(FailedPrecondition):
    """The capability is experimental on this server and the client did not opt in."""

    @property
    def capability(self) -> str:
        return self.metadata.get("capability", "")

    def explain(self) -> str:
        return (
            f"{self.reason}: {self.capability} is experimental on this server; "
            f"opt in with experimental=['{self.capability}'] "
            f"(CLI: --experimental {self.capability})"
        )


class NotFound(ApiError):
    status_code = grpc.StatusCode.NOT_FOUND

    def explain(self) -> str:
        return f"{self.reason or 'NOT_FOUND'}: {self.target or 'the resource'} was not found"


class PermissionDenied(ApiError):
    status_code = grpc.StatusCode.PERMISSION_DENIED


class MissingScope(PermissionDenied):
    @property
    def scope(self) -> str:
        return self.metadata.get("scope", "")

    def explain(self) -> str:
        return f"{self.reason}: the credential lacks the scope {self.scope}"


class AssentDenied(PermissionDenied):
    """ASSENT_MISSING / INVALID / EXPIRED / REVOKED / STALE."""


class SelfApprovalDenied(PermissionDenied):
    pass


class ApprovalRequiresPerson(PermissionDenied):
    """Only a person (a user principal) may approve or reject this memory."""

    @property
    def hold(self) -> str:
        """Why the memory waits: `save_intent` (a held claim), `policy`, ..."""
        return self.metadata.get("hold", "")


class ReplayedSourceNotActive(FailedPrecondition):
    """A retried insert (same request_id) whose source is no longer active: nothing was
    inserted; `state` says what became of it (revoked, erased, rejected, cold, ...)."""

    @property
    def state(self) -> str:
        return self.metadata.get("state", "")

    @property
    def source_id(self) -> str:
        return self.metadata.get("source_id", "")


class Unauthenticated(ApiError):
    status_code = grpc.StatusCode.UNAUTHENTICATED


class Unimplemented(ApiError):
    status_code = grpc.StatusCode.UNIMPLEMENTED


class CapabilityDisabled(Unimplemented):
    @property
    def capability(self) -> str:
        return self.metadata.get("capability", "")

    def explain(self) -> str:
        return f"{self.reason}: the capability {self.capability} is disabled on this server"


class Aborted(ApiError):
    status_code = grpc.StatusCode.ABORTED


class OutOfRange(ApiError):
    status_code = grpc.StatusCode.OUT_OF_RANGE


class EventsCompacted(OutOfRange):
    pass


class ResumePointAhead(OutOfRange):
    """`after_sequence` is past the event log's head (its database was restored)."""

    @property
    def head_sequence(self) -> int | None:
        value = self.metadata.get("head_sequence", "")
        return int(value) if value.isdigit() else None


class ResourceExhausted(ApiError):
    status_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class SubscriberTooSlow(ResourceExhausted):
    pass


class Unavailable(ApiError):
    status_code = grpc.StatusCode.UNAVAILABLE


class TokenExpired(Unauthenticated):
    """An open stream's credential expired: reconnect with a fresh one."""


class StorageFull(ResourceExhausted):
    """The database has no room left; nothing was changed."""


class IdentityProviderUnavailable(Unavailable):
    """The identity provider's signing keys could not be fetched; retry later."""


class DeadlineExceeded(ApiError):
    status_code = grpc.StatusCode.DEADLINE_EXCEEDED


class Cancelled(ApiError):
    status_code = grpc.StatusCode.CANCELLED


class Internal(ApiError):
    status_code = grpc.StatusCode.INTERNAL


__all__ = [
    "BY_CODE",
    "BY_REASON",
    "Aborted",
    "ApiError",
    "ApprovalRequiresPerson",
    "AssentDenied",
    "Cancelled",
    "CapabilityDisabled",
    "DeadlineExceeded",
    "EventsCompacted",
    "ExperimentalNotEnabled",
    "FailedPrecondition",
    "IdentityProviderUnavailable",
    "Internal",
    "InvalidArgument",
    "InvalidPageToken",
    "MissingScope",
    "NotFound",
    "NotPendingReview",
    "OutOfRange",
    "PermissionDenied",
    "ReplayedSourceNotActive",
    "ResourceExhausted",
    "ResumePointAhead",
    "RevisionMismatch",
    "SaveIntentInvalid",
    "SaveIntentRequired",
    "SelfApprovalDenied",
    "StorageFull",
    "SubscriberTooSlow",
    "ThreadMemoryDisabled",
    "TokenExpired",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "from_grpc_error",
]


BY_REASON: dict[str, type[ApiError]] = {
    "SAVE_INTENT_REQUIRED": SaveIntentRequired,
    "SAVE_INTENT_INVALID": SaveIntentInvalid,
    "INVALID_PAGE_TOKEN": InvalidPageToken,
    "REVISION_MISMATCH": RevisionMismatch,
    "THREAD_MEMORY_DISABLED": ThreadMemoryDisabled,
    "NOT_PENDING_REVIEW": NotPendingReview,
    "EXPERIMENTAL_NOT_ENABLED": ExperimentalNotEnabled,
    "MISSING_SCOPE": MissingScope,
    "SELF_APPROVAL_DENIED": SelfApprovalDenied,
    "REPLAYED_SOURCE_NOT_ACTIVE": ReplayedSourceNotActive,
    "APPROVAL_REQUIRES_PERSON": ApprovalRequiresPerson,
    **{
        r: AssentDenied
        for r in (
            "ASSENT_MISSING",
            "ASSENT_INVALID",
            "ASSENT_EXPIRED",
            "ASSENT_REVOKED",
            "ASSENT_STALE",
        )
    },
    "CAPABILITY_DISABLED": CapabilityDisabled,
    "EVENTS_COMPACTED": EventsCompacted,
    "SUBSCRIBER_TOO_SLOW": SubscriberTooSlow,
    "RESUME_POINT_AHEAD": ResumePointAhead,
    "TOKEN_EXPIRED": TokenExpired,
    "STORAGE_FULL": StorageFull,
    "IDENTITY_PROVIDER_UNAVAILABLE": IdentityProviderUnavailable,
}
BY_CODE: dict[grpc.StatusCode, type[ApiError]] = {
    cls.status_code: cls
    for cls in (
        InvalidArgument,
        FailedPrecondition,
        NotFound,
        PermissionDenied,
        Unauthenticated,
        Unimplemented,
        Aborted,
        OutOfRange,
        ResourceExhausted,
        Unavailable,
        DeadlineExceeded,
        Cancelled,
        Internal,
    )
}


def from_grpc_error(err: grpc.RpcError, target: str = "") -> ApiError:
    """The typed error for a failed call (the one decoder of gRPC errors)."""
    if isinstance(err, ApiError):
        return err
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = (err.details() if hasattr(err, "details") else "") or ""
    status = status_of_call(err) if hasattr(err, "trailing_metadata") else None
    info = error_info(status)
    violations: tuple[tuple[str, str], ...] = ()
    if status is not None:
        from google.rpc import error_details_pb2

        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations += tuple((v.field, v.description) for v in bad.field_violations)
    reason = info.reason if info else None
    metadata = dict(info.metadata) if info else {}
    if reason is None and code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        reason, metadata = _transport_too_large(message) or (None, {})
    cls = BY_REASON.get(reason or "") or BY_CODE.get(code, ApiError)
    return cls(
        message,
        status_code=code,
        reason=reason,
        metadata=metadata,
        violations=violations,
        target=target,
        cause=err,
    )


# gRPC's own refusals past the transport ceiling (`agentmem_kernel.transport`), on either side:
# no server can answer them from the catalogue (it would have to read the message whole).
_MESSAGE_OVER = re.compile(r"(Received|Sent) message larger than max \((\d+) vs\. (\d+)\)")
_METADATA_OVER = re.compile(
    r"metadata size exceeds (?:hard |soft )?limit \((?:[a-z ]*?)(\d+) vs\. (\d+)\)"
)


def _transport_too_large(message: str) -> tuple[str, dict[str, str]] | None:
    """MESSAGE_TOO_LARGE with the limit gRPC named, for its bare RESOURCE_EXHAUSTED."""
    if m := _MESSAGE_OVER.search(message):
        side = "server" if m.group(1) == "Received" else "client"
        return "MESSAGE_TOO_LARGE", {"limit_bytes": m.group(3), "refused_by": side}
    if m := _METADATA_OVER.search(message):
        return "MESSAGE_TOO_LARGE", {"limit_bytes": m.group(2), "part": "metadata"}
    return None
