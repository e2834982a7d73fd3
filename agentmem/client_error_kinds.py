"""The `ApiError` subclasses, one per status code and per ErrorInfo reason that a caller may
want to catch on its own (see `agentmem.client_errors`)."""

from __future__ import annotations

import grpc

from agentmem.client_api_error import ApiError


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
