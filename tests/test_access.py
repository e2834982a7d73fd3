"""Authentication, scopes, capability gating, validation, and what errors never contain."""

from __future__ import annotations

import grpc
import pytest
from grpc_status import rpc_status

from agentmem.client import connect
from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    common_pb2,
    events_pb2,
    memory_service_pb2_grpc,
    thread_mode_pb2,
)
from agentmem_kernel import internal_call
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from tests.harness import ADMIN_A, INTERNAL_TOKEN, READER_A, reason
from tests.test_thread_mode import DISABLED, read, receipts, set_mode


def test_no_token_and_wrong_token_are_unauthenticated(stack):
    for token in ("", "not-a-real-token"):
        with pytest.raises(grpc.RpcError) as e:
            read(stack.client(token=token))
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason(e.value) == "UNAUTHENTICATED"
        assert "not-a-real-token" not in str(e.value.details())


def test_malformed_authorization_is_unauthenticated(stack):
    with connect(stack.address, "") as c:
        for value in ("Basic abc", "Bearer", "tok-admin-a"):
            with pytest.raises(grpc.RpcError) as e:
                c.ReadThreadMemoryMode(
                    thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"),
                    metadata=(("authorization", value),),
                )
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_missing_scope_is_permission_denied(stack):
    reader = stack.client(READER_A)
    assert read(reader).revision == 0  # memory.read is enough to read
    with pytest.raises(grpc.RpcError) as e:
        set_mode(reader, DISABLED, 0)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(e.value) == "MISSING_SCOPE"
    with pytest.raises(grpc.RpcError) as e:
        receipts(reader)
    assert reason(e.value) == "MISSING_SCOPE"
    assert read(stack.client()).revision == 0


def test_disabled_capability_is_unimplemented(make_stack):
    stack = make_stack(capabilities__thread_memory_mode=False, capabilities__events=False)
    client = stack.client()
    for call in (
        lambda: read(client),
        lambda: set_mode(client, DISABLED, 0),
        lambda: next(iter(client.WatchEvents(events_pb2.WatchEventsRequest()))),
    ):
        with pytest.raises(grpc.RpcError) as e:
            call()
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert reason(e.value) == "CAPABILITY_DISABLED"
    caps = client.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    enabled = {c.name: c.enabled for c in caps.capabilities}
    assert enabled["thread_memory_mode"] is False and enabled["events"] is False
    assert enabled["source_policy"] is True


def test_capabilities_report_names_and_insert_policy(make_stack):
    stack = make_stack(memory__insert_policy="require_save_intent")
    caps = stack.client().GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    assert caps.api_version == "agentmem.v1"
    assert [c.name for c in caps.capabilities] == [
        "thread_memory_mode",
        "source_policy",
        "retrieval_explain",
        "save_intent",
        "facts",
        "foreign_sources",
        "events",
        "hybrid_retrieval",
    ]
    assert caps.insert_policy == common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT
    # retrieval.embeddings is none by default: words only, and it says why
    assert {c.name: c.enabled for c in caps.capabilities}["hybrid_retrieval"] is False
    assert (caps.retrieval.mode, caps.retrieval.lexical_only_reason) == ("lexical", "disabled")


SECRET = "s3cret-thread-text"
BAD_SETS = [
    ("", 0, common_pb2.MEMORY_MODE_DISABLED, "thread_id"),
    ("x" * 129 + SECRET, 0, common_pb2.MEMORY_MODE_DISABLED, "thread_id"),
    (SECRET + "\x00", 0, common_pb2.MEMORY_MODE_DISABLED, "thread_id"),
    (SECRET + "\n", 0, common_pb2.MEMORY_MODE_DISABLED, "thread_id"),
    (" " + SECRET, 0, common_pb2.MEMORY_MODE_DISABLED, "thread_id"),
    (SECRET, 0, 99, "mode"),
    (SECRET, 0, common_pb2.MEMORY_MODE_UNSPECIFIED, "mode"),
    (SECRET, -1, common_pb2.MEMORY_MODE_DISABLED, "expected_revision"),
]


@pytest.mark.parametrize(("thread_id", "expected", "mode", "field"), BAD_SETS)
def test_bad_input_is_invalid_argument_and_changes_nothing(stack, thread_id, expected, mode, field):
    client = stack.client()
    with pytest.raises(grpc.RpcError) as e:
        client.SetThreadMemoryMode(
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id, expected_revision=expected, mode=mode
            )
        )
    err = e.value
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(err) == "INVALID_FIELD"
    status = rpc_status.from_call(err)
    assert field in err.details()
    raw = status.SerializeToString() + err.details().encode()
    assert SECRET.encode() not in raw and ADMIN_A.token.encode() not in raw
    assert receipts(client) == []


def test_bad_read_and_list_input(stack):
    client = stack.client()
    with pytest.raises(grpc.RpcError) as e:
        read(client, "")
    assert reason(e.value) == "INVALID_FIELD"
    for req in (
        audit_pb2.ListAuditReceiptsRequest(page_size=-1),
        audit_pb2.ListAuditReceiptsRequest(page_size=1001),
        audit_pb2.ListAuditReceiptsRequest(page_token="garbage"),
    ):
        with pytest.raises(grpc.RpcError) as e:
            client.ListAuditReceipts(req)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, req
    with pytest.raises(grpc.RpcError) as e:
        next(iter(client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=-5))))
    assert reason(e.value) == "INVALID_FIELD"


def test_runtime_accepts_calls_from_the_gateway_only(stack):
    request = thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1")
    context = rpb.CallContext(tenant_id="tenant-a", principal_id="mallory", scopes=["memory.read"])
    with grpc.insecure_channel(stack.runtime_address) as ch:
        stub = memory_service_pb2_grpc.MemoryServiceStub(ch)
        for md in (
            (),
            (("authorization", f"Bearer {ADMIN_A.token}"),),
            internal_call.metadata("wrong-credential", context),
        ):
            with pytest.raises(grpc.RpcError) as e:
                stub.ReadThreadMemoryMode(request, metadata=md)
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # the gateway's credential works (this is what the gateway sends)
        ok = stub.ReadThreadMemoryMode(
            request, metadata=internal_call.metadata(INTERNAL_TOKEN, context)
        )
        assert ok.revision == 0


def test_health_and_reflection_on_both_services(stack):
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    from tests.harness import health

    for address, service in (
        (stack.address, "agentmem.v1.MemoryService"),
        (stack.runtime_address, "agentmem.v1.MemoryService"),
    ):
        assert health(address) == 1 and health(address, service) == 1  # SERVING
        with grpc.insecure_channel(address) as ch:
            assert service in ProtoReflectionDescriptorDatabase(ch).get_services()
