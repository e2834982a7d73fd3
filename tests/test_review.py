"""Pending review: approval, rejection, self-approval, audit, per-tenant policy."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import audit_pb2, common_pb2, events_pb2, review_pb2, sources_pb2
from tests.harness import ADMIN_A, READER_A, Key, reason
from tests.memory_helpers import insert, list_sources, search_ids

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
AGENT = Key(
    "tok-agent-a",
    "opencode-agent",
    "tenant-a",
    ("memory.read", "memory.write", "memory.review"),
    kind="agent",
)
USER = Key("tok-user-a", "ann", "tenant-a", ("memory.read", "memory.review", "memory.content.read"))


@pytest.fixture
def pending_stack(make_stack):
    from tests.harness import KEYS

    return make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)],
    )


def review(client, source_id, expected, decision, note=""):
    return client.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=source_id, expected_revision=expected, decision=decision, note=note
        )
    )


def memories(client, status_filter=0):
    return list(
        client.ListMemories(review_pb2.ListMemoriesRequest(status_filter=status_filter)).memories
    )


def test_the_opencode_case_waits_invisible_until_a_user_approves(pending_stack):
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    pending = insert(agent, SQUIER)  # the agent decided on its own to save this
    assert pending.status == sources_pb2.STATUS_PENDING_REVIEW
    assert search_ids(user, "Squier") == []
    assert memories(user) == []  # default reads leave it out
    waiting = memories(user, review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW)
    assert [(m.source_id, m.inserted_by, m.content) for m in waiting] == [
        (pending.source_id, "opencode-agent", SQUIER)
    ]

    with pytest.raises(grpc.RpcError) as e:  # an agent cannot approve its own insert
        review(agent, pending.source_id, 1, review_pb2.DECISION_APPROVE)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(e.value) == "SELF_APPROVAL_DENIED"

    approved = review(user, pending.source_id, 1, review_pb2.DECISION_APPROVE, note="yes, keep")
    assert (approved.status, approved.revision) == (sources_pb2.STATUS_ACTIVE, 2)
    assert approved.receipt.principal_id == "ann"
    assert approved.receipt.action == "memory.review.approve"
    assert search_ids(user, "Squier") == [pending.source_id]
    shown = memories(user)[0]
    assert (shown.save_intent, shown.reviewed_by) == ("user_confirmed", "ann")
    assert shown.HasField("reviewed_at")


def test_rejection_keeps_it_out_of_every_read_but_the_rejected_filter(pending_stack):
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    pending = insert(agent, SQUIER)
    rejected = review(user, pending.source_id, 1, review_pb2.DECISION_REJECT)
    assert rejected.status == sources_pb2.STATUS_REJECTED
    assert search_ids(user, "Squier") == []
    assert memories(user) == [] and list_sources(user).sources == []
    assert [m.source_id for m in memories(user, review_pb2.MEMORY_STATUS_FILTER_REJECTED)] == [
        pending.source_id
    ]
    assert len(memories(user, review_pb2.MEMORY_STATUS_FILTER_ALL)) == 1
    with pytest.raises(grpc.RpcError) as e:  # a decided memory is not reviewed again
        review(user, pending.source_id, 2, review_pb2.DECISION_APPROVE)
    assert reason(e.value) == "NOT_PENDING_REVIEW"


def test_review_is_compare_and_swap_and_needs_the_review_scope(pending_stack):
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    pending = insert(agent, SQUIER)
    with pytest.raises(grpc.RpcError) as e:
        review(user, pending.source_id, 5, review_pb2.DECISION_APPROVE)
    assert reason(e.value) == "REVISION_MISMATCH"
    with pytest.raises(grpc.RpcError) as e:
        review(pending_stack.client(READER_A), pending.source_id, 1, review_pb2.DECISION_APPROVE)
    assert reason(e.value) == "MISSING_SCOPE"
    assert memories(user, review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW)[0].revision == 1


def test_self_approval_can_be_allowed_by_config(make_stack):
    from tests.harness import KEYS

    stack = make_stack(
        memory__insert_policy="review_pending",
        memory__allow_self_approval=True,
        auth__api_keys=[k.config() for k in (*KEYS, AGENT)],
    )
    agent = stack.client(AGENT)
    pending = insert(agent, SQUIER)
    approved = review(agent, pending.source_id, 1, review_pb2.DECISION_APPROVE)
    assert approved.status == sources_pb2.STATUS_ACTIVE
    m = memories(agent)[0]
    assert m.save_intent == ""  # an agent's approval is not a user's confirmation
    assert m.content == ""  # no memory.content.read: metadata only


def test_review_is_audited_and_announced(pending_stack):
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    pending = insert(agent, SQUIER)
    review(user, pending.source_id, 1, review_pb2.DECISION_APPROVE, note="PRIVATE NOTE")
    admin = pending_stack.client(ADMIN_A)
    trail = admin.ListAuditReceipts(
        audit_pb2.ListAuditReceiptsRequest(target_id=pending.source_id)
    ).receipts
    assert [(r.action, r.principal_id) for r in trail] == [
        ("memory.insert", "opencode-agent"),
        ("memory.review.approve", "ann"),
    ]
    stream = admin.WatchEvents(
        events_pb2.WatchEventsRequest(kinds=[events_pb2.EVENT_KIND_MEMORY_REVIEWED])
    )
    event = next(iter(stream)).event
    stream.cancel()
    assert event.memory_reviewed.reviewer_id == "ann"
    assert event.memory_reviewed.decision == review_pb2.DECISION_APPROVE
    assert b"PRIVATE" not in event.SerializeToString() + b"".join(
        r.SerializeToString() for r in trail
    )


def test_an_admin_overrides_the_policy_for_the_tenant(stack):
    admin = stack.client(ADMIN_A)
    current = admin.GetInsertPolicy(review_pb2.GetInsertPolicyRequest())
    assert (current.insert_policy, current.overridden, current.revision) == (
        common_pb2.INSERT_POLICY_PERMISSIVE,
        False,
        0,
    )
    changed = admin.SetInsertPolicy(
        review_pb2.SetInsertPolicyRequest(
            expected_revision=0, insert_policy=common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT
        )
    )
    assert (changed.previous_insert_policy, changed.revision) == (
        common_pb2.INSERT_POLICY_PERMISSIVE,
        1,
    )
    assert changed.receipt.action == "insert_policy.set"
    with pytest.raises(grpc.RpcError) as e:
        insert(admin, "no marker")
    assert reason(e.value) == "SAVE_INTENT_REQUIRED"
    from agentmem.v1 import capabilities_pb2

    caps = admin.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    assert caps.insert_policy == common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT
    with pytest.raises(grpc.RpcError) as e:
        admin.SetInsertPolicy(
            review_pb2.SetInsertPolicyRequest(
                expected_revision=0, insert_policy=common_pb2.INSERT_POLICY_PERMISSIVE
            )
        )
    assert reason(e.value) == "REVISION_MISMATCH"
    with pytest.raises(grpc.RpcError) as e:
        stack.client(READER_A).SetInsertPolicy(
            review_pb2.SetInsertPolicyRequest(
                expected_revision=1, insert_policy=common_pb2.INSERT_POLICY_PERMISSIVE
            )
        )
    assert reason(e.value) == "MISSING_SCOPE"
    from tests.harness import ADMIN_B

    other = stack.client(ADMIN_B).GetInsertPolicy(review_pb2.GetInsertPolicyRequest())
    assert other.insert_policy == common_pb2.INSERT_POLICY_PERMISSIVE  # per tenant
