"""Thread memory mode: a per-thread switch with a revision, changed by compare-and-swap.

Setting it never touches memory or any source's classification: it is its own record.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agentmem.contract import validation
from agentmem.contract.errors import revision_mismatch


class Mode(StrEnum):
    ENABLED = "enabled"
    DISABLED = "disabled"


@dataclass(frozen=True)
class ThreadMode:
    thread_id: str
    mode: Mode
    revision: int  # 0: never set, reads as the deployment default
    effective_at_us: int  # 0 at revision 0


def default(thread_id: str, mode: Mode) -> ThreadMode:
    return ThreadMode(thread_id=thread_id, mode=mode, revision=0, effective_at_us=0)


def check_thread_id(thread_id: str) -> str:
    return validation.identifier("thread_id", thread_id)


def set_mode(current: ThreadMode, *, expected_revision: int, mode: Mode, now_us: int) -> ThreadMode:
    """The next state, or REVISION_MISMATCH (carrying the current revision) on a stale read."""
    validation.non_negative("expected_revision", expected_revision)
    if expected_revision != current.revision:
        raise revision_mismatch(f"thread/{current.thread_id}", current.revision)
    return ThreadMode(
        thread_id=current.thread_id,
        mode=mode,
        revision=current.revision + 1,
        effective_at_us=now_us,
    )
