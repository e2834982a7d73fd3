"""Thread memory mode through both services: revisions, compare-and-swap, receipts, events."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from google.rpc import error_details_pb2

from agentmem.contract.grpc_errors import status_of_call
from agentmem.v1 import audit_pb2, common_pb2, events_pb2, thread_mode_pb2
from tests.harness import ADMIN_A, ADMIN_B, metadata_of, reason

ENABLED, DISABLED = common_pb2.MEMORY_MODE_ENABLED, common_pb2.MEMORY_MODE_DISABLED


def read(client, thread_id="t1", timeout=None):
    return client.ReadThreadMemoryMode(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id), timeout=timeout
    )


def set_mode(client, mode, expected, thread_id="t1", request_id="", timeout=None):
    return client.SetThreadMemoryMode(
        thread_mode_pb2.SetThreadMemoryModeRequest(
            thread_id=thread_id, expected_revision=expected, mode=mode, request_id=request_id
        ),
        timeout=timeout,
    )


def receipts(client, target=""):
    return list(
        client.ListAuditReceipts(
            audit_pb2.ListAuditReceiptsRequest(target_id=target, page_size=1000)
        ).receipts
    )


def events(client, after=0):
    """Every event after `after` that exists now: reads until the head the receipts show."""
    head = len(receipts(client))  # one event per receipt in this suite's mutations
    out = []
    if head <= after:
        return out
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=after))
    for item in stream:
        out.append(item.event)
        if item.event.sequence >= head:
            break
    stream.cancel()
    return out


def test_never_set_thread_reads_default_at_revision_zero(stack):
    r = read(stack.client())
    assert (r.thread_id, r.mode, r.revision) == ("t1", ENABLED, 0)
    assert not r.HasField("effective_at")


def test_default_mode_comes_from_config(make_stack):
    stack = make_stack(memory__default_thread_mode="disabled")
    assert read(stack.client()).mode == DISABLED


def test_set_creates_at_revision_one_with_receipt_and_read_agrees(stack):
    client = stack.client()
    r = set_mode(client, DISABLED, 0, request_id="req-1")
    assert (r.thread_id, r.previous_mode, r.mode, r.revision) == ("t1", ENABLED, DISABLED, 1)
    assert r.HasField("effective_at") and r.effective_at.seconds > 0
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
    again = read(client)
    assert (again.mode, again.revision, again.effective_at) == (DISABLED, 1, r.effective_at)
    r2 = set_mode(client, ENABLED, 1)
    assert (r2.previous_mode, r2.mode, r2.revision) == (DISABLED, ENABLED, 2)
    assert r2.receipt.prev_hash == rc.hash


def test_stale_revision_fails_closed_with_current_revision(stack):
    client = stack.client()
    set_mode(client, DISABLED, 0)
    before_read, before_receipts = read(client), receipts(client)
    with pytest.raises(grpc.RpcError) as e:
        set_mode(client, ENABLED, 0)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(e.value) == "REVISION_MISMATCH"
    assert metadata_of(e.value)["current_revision"] == "1"
    status = status_of_call(e.value)
    failure = error_details_pb2.PreconditionFailure()
    assert any(d.Unpack(failure) for d in status.details if d.Is(failure.DESCRIPTOR))
    assert "current revision is 1" in failure.violations[0].description
    assert read(client) == before_read
    assert receipts(client) == before_receipts
    assert [e.sequence for e in events(client)] == [1]


def test_fifty_concurrent_setters_exactly_one_wins(stack):
    client = stack.client()
    set_mode(client, ENABLED, 0)

    def attempt(i):
        try:
            set_mode(client, DISABLED if i % 2 else ENABLED, 1)
            return "ok"
        except grpc.RpcError as e:
            return reason(e)

    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(attempt, range(50)))
    assert outcomes.count("ok") == 1
    assert outcomes.count("REVISION_MISMATCH") == 49
    assert read(client).revision == 2
    assert len(receipts(client, "t1")) == 2
    assert [e.sequence for e in events(client)] == [1, 2]


def test_threads_are_per_tenant(stack):
    a, b = stack.client(ADMIN_A), stack.client(ADMIN_B)
    set_mode(a, DISABLED, 0)
    assert read(b).revision == 0 and read(b).mode == ENABLED
    with pytest.raises(grpc.RpcError) as e:
        set_mode(b, ENABLED, 1)  # A's revision means nothing to B
    assert (
        reason(e.value) == "REVISION_MISMATCH" and metadata_of(e.value)["current_revision"] == "0"
    )
    set_mode(b, ENABLED, 0)
    assert read(a).mode == DISABLED and read(a).revision == 1
    assert [r.principal_id for r in receipts(a)] == ["alice"]
    assert [r.principal_id for r in receipts(b)] == ["bob"]
    assert [e.thread_memory_mode_updated.mode for e in events(b)] == [ENABLED]


def test_setting_same_mode_is_still_a_revision(stack):
    client = stack.client()
    set_mode(client, ENABLED, 0)
    r = set_mode(client, ENABLED, 1)
    assert (r.previous_mode, r.mode, r.revision) == (ENABLED, ENABLED, 2)
