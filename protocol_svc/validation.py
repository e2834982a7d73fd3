"""Request-shape checks, run after authorization and before the runtime is called."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentmem.core import validation as v
from agentmem.v1 import common_pb2, events_pb2

MODES = (common_pb2.MEMORY_MODE_ENABLED, common_pb2.MEMORY_MODE_DISABLED)
EVENT_KINDS = tuple(
    k for k in events_pb2.EventKind.values() if k != events_pb2.EVENT_KIND_UNSPECIFIED
)
MAX_PAGE_TOKEN = 512


def _thread_mode_read(r: Any) -> None:
    v.identifier("thread_id", r.thread_id)


def _thread_mode_set(r: Any) -> None:
    v.identifier("thread_id", r.thread_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.enum_value("mode", r.mode, MODES)
    v.identifier("request_id", r.request_id, required=False)


def _audit_list(r: Any) -> None:
    v.identifier("target_id", r.target_id, required=False)
    v.page_size(r.page_size)
    if len(r.page_token) > MAX_PAGE_TOKEN:
        raise v.invalid_field("page_token", "is not a token of this query")


def _watch(r: Any) -> None:
    v.non_negative("after_sequence", r.after_sequence)
    for kind in r.kinds:
        v.enum_value("kinds", kind, EVENT_KINDS)


def _nothing(r: Any) -> None:
    return None


VALIDATORS: dict[str, Callable[[Any], None]] = {
    "GetCapabilities": _nothing,
    "ReadThreadMemoryMode": _thread_mode_read,
    "SetThreadMemoryMode": _thread_mode_set,
    "ListAuditReceipts": _audit_list,
    "VerifyAuditChain": _nothing,
    "WatchEvents": _watch,
}
