"""Who may approve or reject what (pure domain, no servers): the review rule as a table of
principal kind, memory state and decision, checked against the outcome it must give."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from agentmem.contract.errors import AgentmemError, Reason
from runtime_svc.domain import review
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.review import Decision, Hold, Kind, Settings
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)

APPROVE, REJECT = Decision.APPROVE, Decision.REJECT
OK = "ok"
PERSON = Reason.APPROVAL_REQUIRES_PERSON.value
SELF = Reason.SELF_APPROVAL_DENIED.value

# The memory's state: why it waits (a hold), or a state that is not up for review.
HELD, POLICY, STEERING = "held claim", "ordinary pending", "held as instruction-like"
NOT_PENDING = {
    "active": Reason.NOT_PENDING_REVIEW.value,
    "rejected": Reason.NOT_PENDING_REVIEW.value,
    "revoked": Reason.SOURCE_REVOKED.value,
    "erased": Reason.SOURCE_ERASED.value,
}

# (reviewer kind, state, decision, reviewer inserted it) → outcome with the default settings
# (no self-approval, no service review), then with both allowed.
EXPECTED: dict[tuple[str, str, Decision, bool], tuple[str, str]] = {
    ("user", HELD, APPROVE, False): (OK, OK),
    ("user", HELD, APPROVE, True): (OK, OK),
    ("user", HELD, REJECT, False): (OK, OK),
    ("user", HELD, REJECT, True): (OK, OK),
    ("agent", HELD, APPROVE, False): (PERSON, PERSON),
    ("agent", HELD, APPROVE, True): (PERSON, PERSON),
    ("agent", HELD, REJECT, False): (PERSON, PERSON),
    ("agent", HELD, REJECT, True): (PERSON, PERSON),
    ("service", HELD, APPROVE, False): (PERSON, PERSON),
    ("service", HELD, APPROVE, True): (PERSON, PERSON),
    ("service", HELD, REJECT, False): (PERSON, PERSON),
    ("service", HELD, REJECT, True): (PERSON, PERSON),
    # Text that reads as instructions to the model: a person decides, as for a held claim.
    **{
        (kind, STEERING, decision, own): (OK, OK) if kind == "user" else (PERSON, PERSON)
        for kind in ("user", "agent", "service")
        for decision in Decision
        for own in (False, True)
    },
    ("user", POLICY, APPROVE, False): (OK, OK),
    ("user", POLICY, APPROVE, True): (OK, OK),
    ("user", POLICY, REJECT, False): (OK, OK),
    ("user", POLICY, REJECT, True): (OK, OK),
    ("agent", POLICY, APPROVE, False): (OK, OK),
    ("agent", POLICY, APPROVE, True): (SELF, OK),
    ("agent", POLICY, REJECT, False): (OK, OK),
    ("agent", POLICY, REJECT, True): (OK, OK),
    ("service", POLICY, APPROVE, False): (PERSON, OK),
    ("service", POLICY, APPROVE, True): (PERSON, OK),
    ("service", POLICY, REJECT, False): (PERSON, OK),
    ("service", POLICY, REJECT, True): (PERSON, OK),
}
SETTINGS = (Settings(), Settings(allow_self_approval=True, allow_service_review=True))
KINDS = ("user", "agent", "service")


def source(state: str, inserted_by: str = "inserter") -> Source:
    base = Source(
        source_id="src_1",
        revision=1,
        kind=SourceKind.MEMORY,
        classification=Classification.ACTIVE,
        status=Status.PENDING_REVIEW,
        thread_id="",
        body=Body(content="I like oolong"),
        provenance=Provenance(inserted_by, "agent", "grpc", ""),
        save_intent=SaveIntent("explicit_user_request" if state == HELD else ""),
        save_intent_held=state == HELD,
        hold_reason="instruction_like" if state == STEERING else "",
    )
    if state == "active":
        return replace(base, status=Status.ACTIVE)
    if state == "rejected":
        return replace(base, status=Status.REJECTED)
    if state == "revoked":
        return replace(base, revoked_at_us=5)
    if state == "erased":
        return replace(base, status=Status.ERASED, erased_at_us=5)
    return base


def outcome(kind: str, state: str, decision: Decision, own: bool, settings: Settings) -> str:
    reviewer = Caller("tenant-a", "reviewer", kind, frozenset({"memory.review"}))
    try:
        decided = review.review(
            source(state, inserted_by="reviewer" if own else "inserter"),
            expected_revision=1,
            decision=decision,
            reviewer=reviewer,
            note="",
            settings=settings,
            now_us=10,
        )
    except AgentmemError as e:
        return e.reason.value
    want = Status.ACTIVE if decision is APPROVE else Status.REJECTED
    assert (decided.status, decided.revision) == (want, 2)
    return OK


@pytest.mark.parametrize(("kind", "state", "decision", "own"), sorted(EXPECTED))
def test_the_rule_gives_the_table(kind, state, decision, own):
    got = tuple(outcome(kind, state, decision, own, s) for s in SETTINGS)
    assert got == EXPECTED[(kind, state, decision, own)]


@pytest.mark.parametrize(("state", "refusal"), sorted(NOT_PENDING.items()))
def test_a_memory_not_pending_is_refused_by_its_state_for_everyone(state, refusal):
    for kind, decision, own, settings in itertools.product(
        KINDS, Decision, (False, True), SETTINGS
    ):
        assert outcome(kind, state, decision, own, settings) == refusal


def test_the_table_covers_every_kind_hold_and_decision():
    assert set(review.RULES) == set(itertools.product(Kind, Hold, Decision))


@pytest.mark.parametrize("hold", sorted(set(Hold) - {Hold.POLICY}))
def test_every_hold_but_the_policy_needs_a_person_whatever_the_settings(hold):
    assert hold in review.PERSON_ONLY
    for kind, decision in itertools.product(Kind, Decision):
        verdict = review.RULES[(kind, hold, decision)]
        want = review.Verdict.ALLOWED if kind is Kind.USER else review.Verdict.PERSON_REQUIRED
        assert verdict is want, (kind, hold, decision)


def test_the_refusal_names_the_hold_and_never_the_text():
    reviewer = Caller("tenant-a", "bot", "service", frozenset({"memory.review"}))
    for state, hold in ((HELD, "save_intent"), (POLICY, "policy")):
        with pytest.raises(AgentmemError) as e:
            review.authorize(source(state), reviewer, APPROVE, Settings())
        assert (e.value.reason, e.value.metadata) == (
            Reason.APPROVAL_REQUIRES_PERSON,
            {"hold": hold},
        )
        assert "oolong" not in str(e.value)


def test_an_unknown_principal_kind_is_never_a_person():
    assert Kind.of("robot") is Kind.SERVICE
    assert outcome("robot", HELD, APPROVE, False, SETTINGS[1]) == PERSON


def test_only_a_users_approval_records_user_confirmed():
    for kind in KINDS:
        reviewer = Caller("tenant-a", "reviewer", kind, frozenset({"memory.review"}))
        approved = review.review(
            source(POLICY),
            expected_revision=1,
            decision=APPROVE,
            reviewer=reviewer,
            note="",
            settings=SETTINGS[1],
            now_us=10,
        )
        assert (approved.save_intent.intent == "user_confirmed") == (kind == "user")
