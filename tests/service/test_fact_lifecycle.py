"""The lifecycle decides what is current: cold, revoked, erased, pending or retracted
statements leave their attribute's chain and the one before is current again; the chain's
links are derived records, found by source, purged and read back."""

from __future__ import annotations

import pytest

from agentmem.contract.errors import AgentmemError
from runtime_svc.domain.fact_chains import Period
from runtime_svc.domain.review import Decision
from runtime_svc.services.fact_retraction import RetractCommand
from runtime_svc.services.facts import FactQuery
from tests.service.facts_support import A, fact_of, history, say, values
from tests.service.lifecycle_support import (
    ACTIVE,
    COLD,
    classify,
    erase,
    readback,
    review,
    revoke,
    supersessions,
)
from tests.service.wiring import caller, reason
from tests.test_review import AGENT

LIVES = ("user", "lives in")
WHERE = [("user", "lives in", "Berlin")]
BEFORE = [("user", "lives in", "Lisbon")]


def test_cold_and_active_flip_the_current_value(service):
    say(service, "I live in Lisbon", 0)
    berlin = say(service, "I live in Berlin", 10)
    classify(service, berlin.source_id, 1, COLD)
    assert values(service) == BEFORE
    assert history(service, *LIVES) == [("Lisbon", 0, None)]
    classify(service, berlin.source_id, 2, ACTIVE)
    assert values(service) == WHERE
    assert history(service, *LIVES) == [("Lisbon", 0, 10), ("Berlin", 10, None)]


@pytest.mark.parametrize("end", ["revoke", "erase"])
def test_revoking_or_erasing_the_newest_statement_reexposes_the_one_before(make_service, end):
    made = make_service()
    service = made.cases
    lisbon = say(service, "I live in Lisbon", 0)
    berlin = say(service, "I live in Berlin", 10)
    link = f"{fact_of(service, 'Lisbon').fact_id}>{fact_of(service, 'Berlin').fact_id}"
    for s in (lisbon, berlin):  # the link is found by either source
        found = supersessions(service, s.source_id)
        assert [(d.derivative_id, d.state, d.eligible) for d in found] == [(link, "stored", True)]
    if end == "revoke":
        revoke(service, berlin.source_id)
    else:
        erase(service, berlin.source_id, 1)
    assert values(service) == BEFORE
    assert history(service, *LIVES) == [("Lisbon", 0, None)]
    r = readback(service, berlin.source_id)
    assert r.clean, [(d.kind, d.state) for d in r.derivatives]
    assert [d.state for d in supersessions(service, berlin.source_id)] == ["purged"]
    assert [d.state for d in supersessions(service, lisbon.source_id)] == ["purged"]
    assert made.sql("SELECT count(*) FROM facts WHERE superseded_by_source != ''") == [(0,)]


def test_a_pending_statement_changes_nothing_until_approved(make_service):
    service = make_service(memory__insert_policy="review_pending").cases
    say(service, "I live in Lisbon", 0, "explicit_user_request")
    pending = say(service, "I live in Berlin", 10, who=caller(AGENT))
    assert values(service) == BEFORE
    review(service, A, pending.source_id, 1, Decision.APPROVE)
    assert values(service) == WHERE
    assert history(service, *LIVES) == [("Lisbon", 0, 10), ("Berlin", 10, None)]


def test_retracting_a_fact_restores_the_value_before_and_keeps_the_memory(make_service):
    made = make_service()
    service = made.cases
    say(service, "I live in Lisbon", 0)
    berlin = say(service, "I live in Berlin", 10)
    wrong = fact_of(service, "Berlin")
    done = service.retraction.retract(A, RetractCommand(wrong.fact_id, "I never lived in Berlin"))
    assert (done.fact_id, done.source_id) == (wrong.fact_id, berlin.source_id)
    assert (done.receipt.action, done.receipt.target_kind, done.receipt.target_id) == (
        "fact.retract",
        "fact",
        wrong.fact_id,
    )
    # Gone from every read of facts; the value before is current again.
    assert values(service) == BEFORE
    assert history(service, *LIVES) == [("Lisbon", 0, None)]
    everything = service.facts.search(
        A, FactQuery(state="all", limit=100, period=Period(0, history=True))
    )
    assert wrong.fact_id not in {f.fact_id for f in everything}
    assert [e.value for e in service.facts.profile(A, "")] == ["Lisbon"]
    answer = service.facts.ask(A, "where do I live", 100)
    assert "Berlin" not in answer.text
    assert wrong.fact_id not in [p.fact_id for p in answer.pieces]
    # The memory itself stays, unchanged.
    source, state = service.reads.get(A, berlin.source_id, False)
    assert (source.revision, state) == (1, "eligible")
    assert [f.source_id for f in service.retrieval.search(A, "Berlin", "", 10)] == [
        berlin.source_id
    ]
    # Announced, with ids only (the reason is not kept).
    (event,) = service.feed.after(A, 0, ["fact_retracted"])
    assert (event.event.fact_id, event.event.source_id) == (wrong.fact_id, berlin.source_id)
    trail, _ = service.audit.list(A, wrong.fact_id, 100, "")
    assert [r.action for r in trail] == ["fact.retract"]
    assert made.sql("SELECT count(*) FROM events WHERE payload LIKE '%never lived%'") == [(0,)]
    # Once only.
    with pytest.raises(AgentmemError) as e:
        service.retraction.retract(A, RetractCommand(wrong.fact_id))
    assert reason(e.value) == "FACT_RETRACTED"


def test_retracting_the_older_value_leaves_the_current_one(service):
    say(service, "I live in Lisbon", 0)
    say(service, "I live in Berlin", 10)
    service.retraction.retract(A, RetractCommand(fact_of(service, "Lisbon").fact_id))
    assert values(service) == WHERE
    assert history(service, *LIVES) == [("Berlin", 10, None)]
