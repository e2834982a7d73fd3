"""The lifecycle table itself (pure domain, no servers): terminal phases stay terminal."""

from __future__ import annotations

import pytest

from agentmem.contract.errors import AgentmemError, Reason
from runtime_svc.domain import lifecycle
from runtime_svc.domain.lifecycle import RULES, Derived, Eligibility, Phase, Transition

# Transitions that may run on a revoked source: they only end it again (and re-purge).
ENDING = {Transition.REVOKE, Transition.REVOKE_ASSENT, Transition.ERASE}


@pytest.mark.parametrize("transition", list(Transition))
def test_nothing_leads_from_erased_and_only_ending_leads_from_revoked(transition):
    with pytest.raises(AgentmemError) as e:
        lifecycle.check(transition, Phase.ERASED)
    assert e.value.reason is Reason.SOURCE_ERASED
    if transition in ENDING:
        assert lifecycle.check(transition, Phase.REVOKED).eligibility is Eligibility.ENDS
    else:
        with pytest.raises(AgentmemError) as e:
            lifecycle.check(transition, Phase.REVOKED)
        assert e.value.reason is Reason.SOURCE_REVOKED


def test_only_a_pending_memory_can_be_reviewed():
    for phase in (Phase.ACTIVE, Phase.REJECTED):
        with pytest.raises(AgentmemError) as e:
            lifecycle.check(Transition.APPROVE, phase)
        assert e.value.reason is Reason.NOT_PENDING_REVIEW
    assert lifecycle.check(Transition.APPROVE, Phase.PENDING_REVIEW).derived is Derived.BUILD


def test_every_transition_that_ends_eligibility_purges():
    for rule in RULES.values():
        ends = rule.eligibility is Eligibility.ENDS
        assert ends == (rule.derived in (Derived.PURGE, Derived.ERASE))
        assert ends == (rule.transition in ENDING)
