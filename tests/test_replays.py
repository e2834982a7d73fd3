"""A retried insert (same request_id) says what is true: its first result while the source is
active or pending review, and FAILED_PRECONDITION / REPLAYED_SOURCE_NOT_ACTIVE naming the
state once the source was revoked, erased, rejected or made cold. Nothing is inserted."""

from __future__ import annotations

import grpc
import pytest

from agentmem.client.errors import ReplayedSourceNotActive
from agentmem.v1 import foreign_pb2, review_pb2, sources_pb2
from tests.harness import reason
from tests.memory_helpers import insert

TEXT = "I keep the spare key under the blue flowerpot"


def replay(client, request_id: str, validate_only: bool = False):
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content=TEXT, request_id=request_id, validate_only=validate_only
        )
    )


def revoke(c, source_id):
    c.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=source_id))


def erase(c, source_id):
    c.erase_source(
        source_id=source_id, expected_revision=c.get_source(source_id=source_id).revision
    )


def cold(c, source_id):
    c.set_source_classification(source_id=source_id, classification="cold", expected_revision=1)


def reject(c, source_id):
    c.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=source_id, expected_revision=1, decision=review_pb2.DECISION_REJECT
        )
    )


CHANGES = {"revoked": revoke, "erased": erase, "cold": cold, "rejected": reject}


@pytest.mark.parametrize("state", sorted(CHANGES))
def test_a_replay_of_a_source_no_longer_active_is_refused_naming_its_state(make_stack, state):
    stack = make_stack(
        memory__insert_policy="review_pending" if state == "rejected" else "permissive"
    )
    c = stack.client()
    first = replay(c, "r-restore")
    CHANGES[state](c, first.source_id)
    now = c.get_source(source_id=first.source_id)
    for validate_only in (False, True):
        with pytest.raises(grpc.RpcError) as e:
            replay(c, "r-restore", validate_only)
        assert (e.value.code(), reason(e.value)) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "REPLAYED_SOURCE_NOT_ACTIVE",
        )
        assert isinstance(e.value, ReplayedSourceNotActive)
        assert (e.value.state, e.value.source_id) == (state, first.source_id)
        assert e.value.metadata["revision"] == str(now.revision)
        assert "flowerpot" not in (e.value.details() or "")
    # nothing inserted, nothing changed
    assert c.get_source(source_id=first.source_id).revision == now.revision
    listed = c.list_memories(status_filter="all").memories
    assert [m.source_id for m in listed] == [first.source_id]


def test_a_replay_of_an_active_or_pending_source_is_its_first_result_now(make_stack):
    stack = make_stack(memory__insert_policy="review_pending")
    c = stack.client()
    first = replay(c, "r-1")
    assert (first.status, first.revision) == (sources_pb2.STATUS_PENDING_REVIEW, 1)
    again = replay(c, "r-1")
    assert (again.deduplicated, again.status, again.revision) == (
        True,
        sources_pb2.STATUS_PENDING_REVIEW,
        1,
    )
    c.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=first.source_id, expected_revision=1, decision=review_pb2.DECISION_APPROVE
        )
    )
    approved = replay(c, "r-1")
    assert (approved.source_id, approved.status, approved.revision) == (
        first.source_id,
        sources_pb2.STATUS_ACTIVE,
        2,
    )


def test_a_different_request_under_a_used_request_id_is_still_invalid(make_stack):
    c = make_stack().client()
    first = insert(c, TEXT, request_id="r-2")
    revoke(c, first.source_id)
    with pytest.raises(grpc.RpcError) as e:
        insert(c, "something else entirely", request_id="r-2")
    assert reason(e.value) == "INVALID_FIELD"
