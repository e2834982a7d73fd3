"""What reads say about a source's lifecycle: erased is its own state everywhere (a source's
read, listings and their filters, the memories' listing), and explanation reasons follow the
lifecycle: the terminal phase first, then review status, then cold; filtered entries carry
no scores, erased sources are not listed."""

from __future__ import annotations

import pytest

from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import SaveIntent, Status
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage.source_pages import SourceFilter
from tests.service.lifecycle_support import COLD, A, classify, erase, review, revoke
from tests.service.wiring import caller
from tests.test_review import AGENT, USER

MARKED = SaveIntent("explicit_user_request")


def insert(cases, text, who=A, intent=None):
    cmd = InsertCommand(content=text, intent=intent or SaveIntent())
    return cases.inserts.insert(who, cmd).source_id


def state(cases, source_id):
    return cases.reads.get(A, source_id, False)[1]


def explain(cases, query):
    return cases.retrieval.explain(A, query, "", 10).entries


def test_an_erased_source_reads_as_erased_not_revoked(service):
    kept = insert(service, "the kayak is red")
    revoked = insert(service, "the kayak is green")
    revoke(service, revoked)
    erased = insert(service, "the kayak is blue")
    erase(service, erased, 1)

    tomb, tomb_state = service.reads.get(A, erased, False)
    assert (tomb.status, tomb_state) == (Status.ERASED, "erased")
    assert state(service, revoked) == "revoked"

    def listed(**f):
        rows = service.reads.list_sources(A, SourceFilter(**f), 100, "")[0]
        return {s.source_id: s for s in rows}

    by_state = listed(effective_state="erased")
    assert list(by_state) == [erased]
    assert by_state[erased].status == "erased"
    assert list(listed(effective_state="revoked")) == [revoked]
    assert list(listed(status="erased")) == [erased]
    # Default listings (and the active status) leave the tombstone out, as pending ones.
    assert set(listed()) == {kept, revoked}
    assert erased not in listed(status="active")
    every_status = tuple(s.value for s in Status)
    memories = service.reads.list_memories(A, every_status, 100, "")[0]
    assert {m.source_id: m.status for m in memories}[erased] == Status.ERASED


def test_erasing_a_pending_or_cold_source_reads_as_erased(make_service):
    cases = make_service(memory__insert_policy="review_pending").cases
    pending = insert(cases, "the lantern is in the attic", caller(AGENT))
    cold = insert(cases, "the lantern is in the shed", intent=MARKED)
    classify(cases, cold, 1, COLD)
    erase(cases, pending, 1)
    erase(cases, cold, 2)
    for sid in (pending, cold):
        got, got_state = cases.reads.get(A, sid, False)
        assert (got.status, got_state) == (Status.ERASED, "erased")


def test_explanation_reports_the_terminal_phase_first(make_service):
    """A revoked source reads revoked whether it was pending, rejected or cold; a pending
    cold source reads pending; filtered entries carry no scores; erased ones are absent."""
    cases = make_service(memory__insert_policy="review_pending").cases
    agent = caller(AGENT)
    selected = insert(cases, "the lantern glows in the garden", intent=MARKED)
    pending_revoked = insert(cases, "the lantern glows in the attic", agent)
    revoke(cases, pending_revoked)
    rejected_revoked = insert(cases, "the lantern glows in the cellar", agent)
    review(cases, caller(USER), rejected_revoked, 1, Decision.REJECT)
    revoke(cases, rejected_revoked)
    cold_revoked = insert(cases, "the lantern glows in the shed", intent=MARKED)
    classify(cases, cold_revoked, 1, COLD)
    revoke(cases, cold_revoked)
    cold_pending = insert(cases, "the lantern glows in the barn", agent)
    classify(cases, cold_pending, 1, COLD)
    cold = insert(cases, "the lantern glows in the boat", intent=MARKED)
    classify(cases, cold, 1, COLD)
    erased = insert(cases, "the lantern glows in the van", intent=MARKED)
    erase(cases, erased, 1)

    entries = explain(cases, "where does the lantern glow")
    assert {e.source_id: e.reason for e in entries} == {
        selected: "selected",
        pending_revoked: "revoked",
        rejected_revoked: "revoked",
        cold_revoked: "revoked",
        cold_pending: "pending_review",
        cold: "cold",
    }
    for e in entries:
        if not e.included:
            assert (e.score, e.lexical_score, e.semantic_score) == (0, 0, 0), e
    # The same order in the source's own state.
    assert state(cases, pending_revoked) == "revoked"
    assert state(cases, cold_pending) == "pending_review"


@pytest.mark.parametrize("order", [0, 1])
def test_filtered_entries_follow_the_lifecycle_order(service, order):
    """Filtered entries are listed by reason (revoked before cold), never by a score."""
    ids = [insert(service, f"the lantern glows {'brightly ' * n}") for n in (1, 3)]
    a, b = ids if order else ids[::-1]
    revoke(service, a)
    classify(service, b, 1, COLD)
    got = [(e.source_id, e.reason) for e in explain(service, "lantern glows brightly")]
    assert got == [(a, "revoked"), (b, "cold")]
