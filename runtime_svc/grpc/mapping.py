"""Domain values ↔ protobuf messages, for the runtime's servicer."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import common_pb2, events_pb2, thread_mode_pb2
from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.thread_mode import Mode

MODES = {
    Mode.ENABLED: common_pb2.MEMORY_MODE_ENABLED,
    Mode.DISABLED: common_pb2.MEMORY_MODE_DISABLED,
}
MODES_FROM_PROTO = {v: k for k, v in MODES.items()}
EVENT_KINDS = {
    events_pb2.EVENT_KIND_THREAD_MEMORY_MODE_UPDATED: domain_events.ThreadMemoryModeUpdated.kind,
}


def timestamp(us: int) -> Timestamp | None:
    if not us:
        return None
    ts = Timestamp()
    ts.FromMicroseconds(us)
    return ts


def receipt(r: Receipt) -> common_pb2.AuditReceipt:
    return common_pb2.AuditReceipt(
        receipt_id=r.receipt_id,
        sequence=r.sequence,
        at=timestamp(r.at_us),
        action=r.action,
        target_kind=r.target_kind,
        target_id=r.target_id,
        target_revision=r.target_revision,
        principal_id=r.principal_id,
        request_id=r.request_id,
        prev_hash=r.prev_hash,
        hash=r.hash,
    )


def event(logged: domain_events.LoggedEvent) -> events_pb2.Event:
    out = events_pb2.Event(
        sequence=logged.sequence, at=timestamp(logged.at_us), event_id=logged.event_id
    )
    e = logged.event
    if isinstance(e, domain_events.ThreadMemoryModeUpdated):
        out.thread_memory_mode_updated.CopyFrom(
            thread_mode_pb2.ThreadMemoryModeUpdated(
                thread_id=e.thread_id,
                previous_mode=MODES[Mode(e.previous_mode)],
                mode=MODES[Mode(e.mode)],
                revision=e.revision,
                effective_at=timestamp(e.effective_at_us),
            )
        )
    return out
