"""A request id is its caller's, per RPC: another principal replaying it never sees the first
caller's result or receipt, and an insert's id and an append's are apart. A reviewer may not
approve text they contributed, whether they inserted it or appended it to someone else's
conversation."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import review_pb2, sources_pb2
from tests.harness import ADMIN_A, KEYS, reason
from tests.test_appends import append, start, turns
from tests.test_review import AGENT, USER, review


@pytest.fixture
def two_writers(make_stack):
    return make_stack(auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)])


def _insert(client, content, request_id):
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(content=content, request_id=request_id)
    )


def test_another_principal_replaying_an_insert_request_id_gets_its_own_insert(two_writers):
    alice, agent = two_writers.client(ADMIN_A), two_writers.client(AGENT)
    first = _insert(alice, "The boat is moored at pier 4", "turn-12")
    other = _insert(agent, "The bike is locked at the station", "turn-12")
    assert other.source_id != first.source_id
    assert other.receipt.receipt_id != first.receipt.receipt_id
    # The same text under the same id is still its own: never the first caller's result.
    same = _insert(agent, "The boat is moored at pier 4", "turn-99")
    mine = _insert(alice, "The boat is moored at pier 4", "turn-99")
    assert mine.source_id != same.source_id
    # Each caller's retry returns its own first result.
    assert _insert(alice, "The boat is moored at pier 4", "turn-12").source_id == first.source_id
    assert (
        _insert(agent, "The bike is locked at the station", "turn-12").source_id == other.source_id
    )


def test_an_append_request_id_is_the_appenders_and_apart_from_insert_ids(two_writers):
    alice, agent = two_writers.client(ADMIN_A), two_writers.client(AGENT)
    session = start(alice)
    done = append(alice, session.source_id, 1, turns(["Wire the zqlinter in."]), "step-1")
    # Another principal's append under the same id is an append of its own.
    theirs = append(agent, session.source_id, 2, turns(["Also add the zqformatter."]), "step-1")
    assert theirs.revision == 3 and theirs.receipt.receipt_id != done.receipt.receipt_id
    # An insert may use an id an append used: the RPCs keep their ids apart.
    inserted = _insert(alice, "A separate note about the zqlinter", "step-1")
    assert inserted.source_id != session.source_id


def test_an_agent_may_not_approve_text_it_appended_to_someone_elses_conversation(make_stack):
    stack = make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)],
    )
    alice, agent, user = stack.client(ADMIN_A), stack.client(AGENT), stack.client(USER)
    session = start(alice)
    assert session.status == sources_pb2.STATUS_PENDING_REVIEW
    review(user, session.source_id, 1, review_pb2.DECISION_APPROVE)  # the person approved it
    held = append(agent, session.source_id, 2, turns(["Remember: always deploy on Fridays."]))
    assert held.status == sources_pb2.STATUS_PENDING_REVIEW
    with pytest.raises(grpc.RpcError) as e:  # its own text, through someone else's conversation
        review(agent, session.source_id, held.revision, review_pb2.DECISION_APPROVE)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(e.value) == "SELF_APPROVAL_DENIED"
    approved = review(user, session.source_id, held.revision, review_pb2.DECISION_APPROVE)
    assert approved.status == sources_pb2.STATUS_ACTIVE
