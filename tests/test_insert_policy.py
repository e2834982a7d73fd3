"""Insert policy: enforced in the runtime, errors never echo the payload."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import sources_pb2
from tests.harness import ADMIN_A, reason
from tests.memory_helpers import insert, list_sources, search_ids

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
PLANTED_KEY = "sk-live-PLANTEDKEY1234567890"


def test_permissive_accepts_inserts_without_a_marker(stack):
    r = insert(stack.client(), SQUIER)
    assert r.status == sources_pb2.STATUS_ACTIVE
    assert search_ids(stack.client(), "Squier") == [r.source_id]


@pytest.mark.parametrize("intent", ["explicit_user_request", "user_confirmed", "client_auto_save"])
def test_require_save_intent_accepts_each_marker(make_stack, intent):
    stack = make_stack(memory__insert_policy="require_save_intent")
    r = insert(stack.client(), SQUIER, save_intent=intent, save_intent_source="opencode")
    assert r.status == sources_pb2.STATUS_ACTIVE


def test_require_save_intent_refuses_the_opencode_case_and_stores_nothing(make_stack):
    stack = make_stack(memory__insert_policy="require_save_intent")
    client = stack.client()
    for metadata, expected in (
        ({}, "SAVE_INTENT_REQUIRED"),
        ({"save_intent": "because_i_felt_like_it"}, "SAVE_INTENT_INVALID"),
    ):
        with pytest.raises(grpc.RpcError) as e:
            insert(client, f"{SQUIER} {PLANTED_KEY}", **metadata)
        err = e.value
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(err) == expected
        raw = err.details() + str(dict(err.trailing_metadata()))
        for secret in ("Squier", "pickguard", PLANTED_KEY, ADMIN_A.token):
            assert secret not in raw
    assert list_sources(client).sources == []
    assert search_ids(client, "Squier") == []


def test_validate_only_reports_the_policy_without_storing(make_stack):
    stack = make_stack(memory__insert_policy="require_save_intent")
    client = stack.client()
    with pytest.raises(grpc.RpcError) as e:
        client.InsertMemory(sources_pb2.InsertMemoryRequest(content=SQUIER, validate_only=True))
    assert reason(e.value) == "SAVE_INTENT_REQUIRED"
    ok = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content=SQUIER,
            validate_only=True,
            metadata=sources_pb2.InsertMetadata(save_intent="user_confirmed"),
        )
    )
    assert ok.status == sources_pb2.STATUS_ACTIVE and not ok.source_id
    assert list_sources(client).sources == []


def test_review_pending_stores_but_never_retrieves(make_stack):
    stack = make_stack(memory__insert_policy="review_pending")
    client = stack.client()
    pending = insert(client, SQUIER)
    marked = insert(client, "I play bass on Sundays", save_intent="explicit_user_request")
    assert pending.status == sources_pb2.STATUS_PENDING_REVIEW
    assert marked.status == sources_pb2.STATUS_ACTIVE
    assert search_ids(client, "Squier") == []
    assert search_ids(client, "bass") == [marked.source_id]
    assert [s.source_id for s in list_sources(client).sources] == [marked.source_id]
    listed = list_sources(client, status=sources_pb2.STATUS_PENDING_REVIEW).sources
    assert [(s.source_id, s.effective_retrieval_state) for s in listed] == [
        (pending.source_id, sources_pb2.EFFECTIVE_RETRIEVAL_STATE_PENDING_REVIEW)
    ]


def test_save_intent_companions_are_length_limited(stack):
    with pytest.raises(grpc.RpcError) as e:
        insert(stack.client(), "x y", save_intent="user_confirmed", save_intent_evidence="e" * 201)
    assert reason(e.value) == "INVALID_FIELD"
