"""Thread memory mode: revisions, compare-and-swap, receipts and events, per tenant."""

from __future__ import annotations

import pytest

from agentmem.contract.errors import AgentmemError
from runtime_svc.domain.thread_mode import Mode
from tests.harness import ADMIN_A, ADMIN_B
from tests.service.wiring import caller, reason

ENABLED, DISABLED = Mode.ENABLED, Mode.DISABLED
A, B = caller(ADMIN_A), caller(ADMIN_B)


def receipts(cases, who=A, target=""):
    return cases.audit.list(who, target, 1000, "")[0]


def events(cases, who=A):
    return cases.feed.after(who, 0, [])


def test_never_set_thread_reads_default_at_revision_zero(service):
    r = service.thread_modes.read(A, "t1")
    assert (r.thread_id, r.mode, r.revision, r.effective_at_us) == ("t1", ENABLED, 0, 0)


def test_default_mode_comes_from_config(make_service):
    cases = make_service(memory__default_thread_mode="disabled").cases
    assert cases.thread_modes.read(A, "t1").mode == DISABLED


def test_set_creates_at_revision_one_with_receipt_and_read_agrees(service):
    r = service.thread_modes.set(caller(ADMIN_A, request_id="req-1"), "t1", 0, DISABLED)
    assert (r.current.thread_id, r.previous.mode, r.current.mode, r.current.revision) == (
        "t1",
        ENABLED,
        DISABLED,
        1,
    )
    assert r.current.effective_at_us > 0
    rc = r.receipt
    assert rc.receipt_id and rc.hash and rc.prev_hash == ""
    assert (rc.sequence, rc.action, rc.target_kind, rc.target_id, rc.target_revision) == (
        1,
        "thread_memory_mode.set",
        "thread",
        "t1",
        1,
    )
    assert (rc.principal_id, rc.request_id) == ("alice", "req-1")
    assert service.thread_modes.read(A, "t1") == r.current
    r2 = service.thread_modes.set(A, "t1", 1, ENABLED)
    assert (r2.previous.mode, r2.current.mode, r2.current.revision) == (DISABLED, ENABLED, 2)
    assert r2.receipt.prev_hash == rc.hash


def test_stale_revision_fails_closed_with_current_revision(service):
    service.thread_modes.set(A, "t1", 0, DISABLED)
    before_read, before_receipts = service.thread_modes.read(A, "t1"), receipts(service)
    with pytest.raises(AgentmemError) as e:
        service.thread_modes.set(A, "t1", 0, ENABLED)
    assert reason(e.value) == "REVISION_MISMATCH"
    assert e.value.metadata["current_revision"] == "1"
    assert service.thread_modes.read(A, "t1") == before_read
    assert receipts(service) == before_receipts
    assert [e.sequence for e in events(service)] == [1]


def test_threads_are_per_tenant(service):
    service.thread_modes.set(A, "t1", 0, DISABLED)
    assert service.thread_modes.read(B, "t1").revision == 0
    assert service.thread_modes.read(B, "t1").mode == ENABLED
    with pytest.raises(AgentmemError) as e:
        service.thread_modes.set(B, "t1", 1, ENABLED)  # A's revision means nothing to B
    assert reason(e.value) == "REVISION_MISMATCH"
    assert e.value.metadata["current_revision"] == "0"
    service.thread_modes.set(B, "t1", 0, ENABLED)
    assert service.thread_modes.read(A, "t1").mode == DISABLED
    assert service.thread_modes.read(A, "t1").revision == 1
    assert [r.principal_id for r in receipts(service, A)] == ["alice"]
    assert [r.principal_id for r in receipts(service, B)] == ["bob"]
    assert [e.event.mode for e in events(service, B)] == ["enabled"]


def test_setting_same_mode_is_still_a_revision(service):
    service.thread_modes.set(A, "t1", 0, ENABLED)
    r = service.thread_modes.set(A, "t1", 1, ENABLED)
    assert (r.previous.mode, r.current.mode, r.current.revision) == (ENABLED, ENABLED, 2)
