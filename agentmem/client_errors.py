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

import grpc

from agentmem.client_api_error import ApiError
from agentmem.client_error_kinds import (
    Aborted,
    ApprovalRequiresPerson,
    AssentDenied,
    Cancelled,
    CapabilityDisabled,
    DeadlineExceeded,
    EventsCompacted,
    ExperimentalNotEnabled,
    FailedPrecondition,
    IdentityProviderUnavailable,
    Internal,
    InvalidArgument,
    InvalidPageToken,
    MissingScope,
    NotFound,
    NotPendingReview,
    OutOfRange,
    PermissionDenied,
    ReplayedSourceNotActive,
    ResourceExhausted,
    ResumePointAhead,
    RevisionMismatch,
    SaveIntentInvalid,
    SaveIntentRequired,
    SelfApprovalDenied,
    StorageFull,
    SubscriberTooSlow,
    ThreadMemoryDisabled,
    TokenExpired,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from agentmem.contract.grpc_errors import error_info, status_of_call

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
