"""What the console's calls take and give besides messages: the names of enum values its
forms use, the events it shows live, and `GatewayError`, a failed call decoded from the
status's ErrorInfo by `agentmem.contract.grpc_errors`."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc

from agentmem.client.values import enum_members
from agentmem.contract.grpc_errors import error_info, status_of_call
from agentmem.v1 import common_pb2, events_pb2, review_pb2, sources_pb2

CLASSIFICATIONS = {
    "active": sources_pb2.CLASSIFICATION_ACTIVE,
    "cold": sources_pb2.CLASSIFICATION_COLD,
}
STATUSES = enum_members(sources_pb2.Status, "STATUS_")
STATES = enum_members(sources_pb2.EffectiveRetrievalState, "EFFECTIVE_RETRIEVAL_STATE_")
KINDS = enum_members(sources_pb2.SourceKind, "SOURCE_KIND_")
MODES = {"enabled": common_pb2.MEMORY_MODE_ENABLED, "disabled": common_pb2.MEMORY_MODE_DISABLED}
MEMORY_FILTERS = enum_members(review_pb2.MemoryStatusFilter, "MEMORY_STATUS_FILTER_")
DECISIONS = {"approve": review_pb2.DECISION_APPROVE, "reject": review_pb2.DECISION_REJECT}
LIVE_KINDS = (
    events_pb2.EVENT_KIND_MEMORY_INSERTED,
    events_pb2.EVENT_KIND_MEMORY_REVIEWED,
    events_pb2.EVENT_KIND_SOURCE_CLASSIFICATION_UPDATED,
    events_pb2.EVENT_KIND_SOURCE_REVOKED,
    events_pb2.EVENT_KIND_SOURCE_ERASED,
)


@dataclass(frozen=True)
class GatewayError(Exception):
    """A refusal or failure of the gateway, as its error model states it."""

    code: str
    reason: str
    message: str
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def current_revision(self) -> int | None:
        value = self.metadata.get("current_revision")
        return int(value) if value and value.isdigit() else None


def decode(err: grpc.RpcError) -> GatewayError:
    info = error_info(status_of_call(err))
    code = err.code().name if callable(getattr(err, "code", None)) else "UNKNOWN"
    details = err.details() if callable(getattr(err, "details", None)) else ""
    return GatewayError(
        code=code,
        reason=info.reason if info else code,
        message=details or "",
        metadata=dict(info.metadata) if info else {},
    )
