"""Per-tenant limits: request rate per tenant and per principal (gateway, per replica
share), concurrent watches, stored memories and bytes (runtime, exact). RESOURCE_EXHAUSTED
with RATE_LIMITED / QUOTA_EXCEEDED naming the limit, RetryInfo where waiting helps, and
other tenants unaffected."""

from __future__ import annotations

import time

import grpc
import pytest
from google.rpc import error_details_pb2

from agentmem.contract.grpc_errors import status_of_call
from agentmem.v1 import events_pb2, sources_pb2, thread_mode_pb2
from agentmem_kernel.config import Limits
from protocol_svc.limits import Limiter
from tests.harness import ADMIN_A, ADMIN_B, READER_A, metadata_of, reason
from tests.memory_helpers import insert, search


def read(client):
    return client.ReadThreadMemoryMode(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"), timeout=10
    )


def retry_delay(err: grpc.RpcError) -> float | None:
    status = status_of_call(err)
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.ToTimedelta().total_seconds()
    return None


def exhaust(call) -> grpc.RpcError:
    """Calls until refused (a bucket of 3 refuses by the 4th call at most well within 100)."""
    for _ in range(100):
        try:
            call()
        except grpc.RpcError as e:
            return e
    raise AssertionError("never limited")


def test_tenant_rate_limit_refuses_with_retry_info_and_spares_other_tenants(make_stack):
    stack = make_stack(
        limits__requests_per_second_per_tenant=0.5,
        limits__burst_per_tenant=3,
    )
    a, b = stack.client(ADMIN_A), stack.client(ADMIN_B)
    err = exhaust(lambda: read(a))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(err) == "RATE_LIMITED"
    assert metadata_of(err)["limit"] == "requests_per_second_per_tenant"
    delay = retry_delay(err)
    assert delay is not None and 0 < delay <= 2.0
    # Another principal of the same tenant shares the tenant's bucket...
    with pytest.raises(grpc.RpcError) as same_tenant:
        read(stack.client(READER_A))
    assert reason(same_tenant.value) == "RATE_LIMITED"
    # ...another tenant does not.
    for _ in range(3):
        assert read(b).revision == 0


def test_principal_rate_limit_spares_other_principals_of_the_tenant(make_stack):
    stack = make_stack(limits__requests_per_second_per_principal=0.5, limits__burst_per_principal=2)
    err = exhaust(lambda: read(stack.client(ADMIN_A)))
    assert reason(err) == "RATE_LIMITED"
    assert metadata_of(err)["limit"] == "requests_per_second_per_principal"
    assert retry_delay(err) is not None
    assert read(stack.client(READER_A)).revision == 0


def test_per_tenant_override(make_stack):
    stack = make_stack(
        limits__requests_per_second_per_tenant=0.5,
        limits__burst_per_tenant=1,
        limits__tenants={
            "tenant-b": {"requests_per_second_per_tenant": 1000, "burst_per_tenant": 1000}
        },
    )
    assert reason(exhaust(lambda: read(stack.client(ADMIN_A)))) == "RATE_LIMITED"
    b = stack.client(ADMIN_B)
    for _ in range(20):
        read(b)


def test_stored_memories_quota(make_stack):
    stack = make_stack(
        limits__memories_per_tenant=2,
        limits__tenants={"tenant-b": {"memories_per_tenant": 5}},
    )
    a = stack.client(ADMIN_A)
    insert(a, "first memory")
    insert(a, "second memory", request_id="req-2")
    with pytest.raises(grpc.RpcError) as err:
        insert(a, "third memory")
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(err.value) == "QUOTA_EXCEEDED"
    assert metadata_of(err.value) == {"limit": "memories_per_tenant", "value": "2"}
    assert retry_delay(err.value) is None  # waiting frees nothing
    assert "third" not in (err.value.details() or "")
    # A retry of a stored insert still answers with its first result.
    assert insert(a, "second memory", request_id="req-2").source_id
    # Nothing was stored by the refused insert.
    assert not search(a, "third").hits
    # Tenant B (override 5) is unaffected by A's quota.
    b = stack.client(ADMIN_B)
    for i in range(3):
        insert(b, f"b memory {i}")


def test_validate_only_applies_the_stored_quotas(make_stack):
    """validate_only answers what a real insert would: with the quota used up, both are
    QUOTA_EXCEEDED; a retry of a stored insert (its request_id) would still succeed."""
    stack = make_stack(limits__memories_per_tenant=1, limits__bytes_per_tenant=0)
    a = stack.client(ADMIN_A)
    first = insert(a, "the only memory", request_id="req-1")
    for request in (
        sources_pb2.InsertMemoryRequest(content="one too many", validate_only=True),
        sources_pb2.InsertMemoryRequest(content="one too many"),
    ):
        with pytest.raises(grpc.RpcError) as err:
            a.InsertMemory(request, timeout=10)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert reason(err.value) == "QUOTA_EXCEEDED"
        assert metadata_of(err.value) == {"limit": "memories_per_tenant", "value": "1"}
    retry = a.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content="the only memory", request_id="req-1", validate_only=True
        ),
        timeout=10,
    )
    assert retry.status == first.status and not retry.HasField("receipt")


def test_validate_only_applies_the_stored_bytes_quota(make_stack):
    stack = make_stack(limits__bytes_per_tenant=40)
    a = stack.client(ADMIN_A)
    insert(a, "x" * 30)
    with pytest.raises(grpc.RpcError) as err:
        a.InsertMemory(
            sources_pb2.InsertMemoryRequest(content="y" * 20, validate_only=True), timeout=10
        )
    assert reason(err.value) == "QUOTA_EXCEEDED"
    assert metadata_of(err.value) == {"limit": "bytes_per_tenant", "value": "40"}


def test_stored_bytes_quota(make_stack):
    stack = make_stack(limits__bytes_per_tenant=40)
    a = stack.client(ADMIN_A)
    insert(a, "x" * 30)
    with pytest.raises(grpc.RpcError) as err:
        insert(a, "y" * 11)
    assert reason(err.value) == "QUOTA_EXCEEDED"
    assert metadata_of(err.value)["limit"] == "bytes_per_tenant"
    insert(a, "z" * 10)  # exactly at the quota
    insert(stack.client(ADMIN_B), "w" * 39)


def test_concurrent_watches_per_tenant(make_stack):
    stack = make_stack(limits__watches_per_tenant=1)
    a = stack.client(ADMIN_A)
    insert(a, "an event to watch")
    first = a.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
    assert next(first).event.sequence == 1
    second = a.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
    with pytest.raises(grpc.RpcError) as err:
        next(second)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(err.value) == "QUOTA_EXCEEDED"
    assert metadata_of(err.value)["limit"] == "watches_per_tenant"
    # Another tenant may watch.
    b = stack.client(ADMIN_B)
    insert(b, "b event")
    other = b.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
    assert next(other).event.sequence == 1
    other.cancel()
    # When the first watch ends, its slot is free again (the gateway sees the cancel soon).
    first.cancel()
    deadline = time.monotonic() + 10
    while True:
        again = a.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
        try:
            assert next(again).event.sequence == 1
            again.cancel()
            break
        except grpc.RpcError as e:
            assert reason(e) == "QUOTA_EXCEEDED" and time.monotonic() < deadline


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_buckets_refill_and_replicas_enforce_their_share():
    clock = FakeClock()
    limiter = Limiter(
        Limits(requests_per_second_per_tenant=10, burst_per_tenant=10, gateway_replicas=2),
        clock,
    )
    for _ in range(5):  # this replica's share of the burst: 5
        limiter.admit("t", "p")
    with pytest.raises(Exception) as err:
        limiter.admit("t", "p")
    assert err.value.retry_after == pytest.approx(0.2)  # 5 per second on this replica
    clock.now += 0.2
    limiter.admit("t", "p")
    limiter.admit("other", "p")  # another tenant has its own bucket
