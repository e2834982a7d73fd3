"""Thread memory mode through both services: a stale revision on the wire (status, details,
metadata), and concurrent setters through the runtime's writer. The rules themselves are
tested on the use case (tests/service/test_thread_mode.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from google.rpc import error_details_pb2

from agentmem.contract.grpc_errors import status_of_call
from agentmem.v1 import audit_pb2, common_pb2, events_pb2, thread_mode_pb2
from tests.harness import metadata_of, reason

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
