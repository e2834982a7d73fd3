"""What reads say about a source's lifecycle: erased is its own state everywhere (GetSource,
ListSources and its filters, ListMemories, MCP), and explanation reasons follow the
lifecycle: the terminal phase first, then review status, then cold; filtered entries carry
no scores, erased sources are not listed."""

from __future__ import annotations

import pytest

from agentmem.v1 import foreign_pb2, retrieval_pb2, review_pb2, sources_pb2
from tests.memory_helpers import COLD, classify, explain, get_source, insert, list_sources
from tests.test_lifecycle import pending_stack  # noqa: F401 (fixture)
from tests.test_review import AGENT, USER, review

ERASED = sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ERASED
REVOKED = sources_pb2.EFFECTIVE_RETRIEVAL_STATE_REVOKED


def erase(client, source_id, revision):
    return client.EraseSource(
        foreign_pb2.EraseSourceRequest(source_id=source_id, expected_revision=revision)
    )


def revoke(client, source_id):
    return client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=source_id))


def test_an_erased_source_reads_as_erased_not_revoked(stack):
    client = stack.client()
    kept = insert(client, "the kayak is red").source_id
    revoked = insert(client, "the kayak is green").source_id
    revoke(client, revoked)
    erased = insert(client, "the kayak is blue").source_id
    erase(client, erased, 1)

    tomb = get_source(client, erased)
    assert (tomb.status, tomb.effective_retrieval_state) == (sources_pb2.STATUS_ERASED, ERASED)
    assert get_source(client, revoked).effective_retrieval_state == REVOKED

    def listed(**f):
        return {s.source_id: s for s in list_sources(client, **f).sources}

    by_state = listed(effective_state=ERASED)
    assert list(by_state) == [erased]
    assert by_state[erased].status == sources_pb2.STATUS_ERASED
    assert list(listed(effective_state=REVOKED)) == [revoked]
    assert list(listed(status=sources_pb2.STATUS_ERASED)) == [erased]
    # Default listings (and the active status) leave the tombstone out, as pending ones.
    assert set(listed()) == {kept, revoked}
    assert erased not in listed(status=sources_pb2.STATUS_ACTIVE)
    memories = client.ListMemories(
        review_pb2.ListMemoriesRequest(status_filter=review_pb2.MEMORY_STATUS_FILTER_ALL)
    ).memories
    assert {m.source_id: m.status for m in memories}[erased] == sources_pb2.STATUS_ERASED


def test_erasing_a_pending_or_cold_source_reads_as_erased(pending_stack):  # noqa: F811
    agent, admin = pending_stack.client(AGENT), pending_stack.client()
    pending = insert(agent, "the lantern is in the attic").source_id
    cold = insert(admin, "the lantern is in the shed", save_intent="explicit_user_request")
    classify(admin, cold.source_id, 1, COLD)
    erase(admin, pending, 1)
    erase(admin, cold.source_id, 2)
    for sid in (pending, cold.source_id):
        got = get_source(admin, sid)
        assert (got.status, got.effective_retrieval_state) == (sources_pb2.STATUS_ERASED, ERASED)


def test_explanation_reports_the_terminal_phase_first(pending_stack):  # noqa: F811
    """A revoked source reads revoked whether it was pending, rejected or cold; a pending
    cold source reads pending; filtered entries carry no scores; erased ones are absent."""
    agent, user, admin = (pending_stack.client(k) for k in (AGENT, USER, None))
    intent = {"save_intent": "explicit_user_request"}
    selected = insert(admin, "the lantern glows in the garden", **intent).source_id
    pending_revoked = insert(agent, "the lantern glows in the attic").source_id
    revoke(admin, pending_revoked)
    rejected_revoked = insert(agent, "the lantern glows in the cellar").source_id
    review(user, rejected_revoked, 1, review_pb2.DECISION_REJECT)
    revoke(admin, rejected_revoked)
    cold_revoked = insert(admin, "the lantern glows in the shed", **intent).source_id
    classify(admin, cold_revoked, 1, COLD)
    revoke(admin, cold_revoked)
    cold_pending = insert(agent, "the lantern glows in the barn").source_id
    classify(admin, cold_pending, 1, COLD)
    cold = insert(admin, "the lantern glows in the boat", **intent).source_id
    classify(admin, cold, 1, COLD)
    erased = insert(admin, "the lantern glows in the van", **intent).source_id
    erase(admin, erased, 1)

    entries = explain(admin, "where does the lantern glow").entries
    reasons = {e.source_id: e.reason for e in entries}
    assert reasons == {
        selected: retrieval_pb2.REASON_SELECTED,
        pending_revoked: retrieval_pb2.REASON_REVOKED,
        rejected_revoked: retrieval_pb2.REASON_REVOKED,
        cold_revoked: retrieval_pb2.REASON_REVOKED,
        cold_pending: retrieval_pb2.REASON_PENDING_REVIEW,
        cold: retrieval_pb2.REASON_COLD,
    }
    for e in entries:
        if not e.included:
            assert (e.score, e.lexical_score, e.semantic_score) == (0, 0, 0), e
    # The same order in the source's own state.
    assert get_source(admin, pending_revoked).effective_retrieval_state == REVOKED
    assert get_source(admin, cold_pending).effective_retrieval_state == (
        sources_pb2.EFFECTIVE_RETRIEVAL_STATE_PENDING_REVIEW
    )


@pytest.mark.parametrize("order", [0, 1])
def test_filtered_entries_follow_the_lifecycle_order(stack, order):
    """Filtered entries are listed by reason (revoked before cold), never by a score."""
    client = stack.client()
    ids = [insert(client, f"the lantern glows {'brightly ' * n}").source_id for n in (1, 3)]
    a, b = ids if order else ids[::-1]
    revoke(client, a)
    classify(client, b, 1, COLD)
    got = [(e.source_id, e.reason) for e in explain(client, "lantern glows brightly").entries]
    assert got == [(a, retrieval_pb2.REASON_REVOKED), (b, retrieval_pb2.REASON_COLD)]
