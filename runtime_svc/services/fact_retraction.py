"""Use case: the user says a fact is wrong (RetractFact).

A retracted fact leaves every read (search, profile, ask, history) and its attribute's chain
is relinked without it, so the value stated before it is current again. The memory it came
from stays as it is (no new revision): only this reading of it was wrong. Only a user may
retract (an agent cannot overrule what the user said); the reason is checked, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract import scopes, validation
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.contract.scopes import Scope
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import FactRetracted
from runtime_svc.services import fact_chains
from runtime_svc.services.clock import Clock
from runtime_svc.services.journal import Journal, Target
from runtime_svc.services.source_lifecycle import check_reason
from runtime_svc.storage.unit_of_work import UnitOfWork

USER = "user"


@dataclass(frozen=True)
class RetractCommand:
    fact_id: str
    reason: str = ""


@dataclass(frozen=True)
class Retracted:
    fact_id: str
    source_id: str
    receipt: Receipt


class FactRetraction:
    def __init__(self, uow: UnitOfWork, journal: Journal, clock: Clock) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock

    def retract(self, caller: Caller, cmd: RetractCommand) -> Retracted:
        scopes.require(caller.scopes, Scope.REVIEW)
        if caller.principal_kind != USER:
            raise AgentmemError(Reason.USER_PRINCIPAL_REQUIRED)
        validation.identifier("fact_id", cmd.fact_id)
        check_reason(cmd.reason)
        with self._uow.write(caller.tenant_id) as tx:
            fact = tx.facts.get(cmd.fact_id)
            if fact is None:
                raise AgentmemError(Reason.NOT_FOUND)
            if fact.retracted_at_us:
                raise AgentmemError(Reason.FACT_RETRACTED)
            now = self._clock()
            tx.facts.retract(cmd.fact_id, now)
            fact_chains.relink(tx, tx.fact_links.keys_for_facts([cmd.fact_id]))
            receipt = self._journal.record(
                tx,
                caller,
                action=Action.FACT_RETRACT,
                target=Target("fact", cmd.fact_id, 1),
                event=FactRetracted(cmd.fact_id, fact.source_id),
                at_us=now,
            )
        return Retracted(cmd.fact_id, fact.source_id, receipt)
