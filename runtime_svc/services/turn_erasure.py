"""Use case: erase the turns one principal wrote in a conversation that others wrote in too
(EraseSource with `appended_by`): a poisoned agent's text goes, the person's stays.

A partial erasure is a lifecycle transition (`Transition.ERASE_TURNS`): revision CAS, the
erased turns' rows deleted and the kept ones moved up, every derived record of the
conversation purged and derived again from what is left (`Derived.REBUILD`), one event and
one receipt counting the turns and messages erased. The messages the conversation was
inserted with are its inserter's: erasing the inserter's turns takes them too (one turn),
the others' appended turns stay and the conversation keeps its inserter in its provenance
(`turns.erase_appended`). A partial erasure that would leave no message is refused: that
is erasing the whole source.
"""

from __future__ import annotations

from agentmem.contract import validation
from agentmem.contract.errors import invalid_field
from runtime_svc.domain import source_transitions, turns
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import TurnsErased
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.sources import Body, Source
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.storage.unit_of_work import UnitOfWork


def erase_turns(
    uow: UnitOfWork,
    clock: Clock,
    changes: SourceChanges,
    extraction: FactExtraction,
    caller: Caller,
    *,
    source_id: str,
    expected_revision: int,
    appended_by: str,
) -> tuple[Source, Source, Receipt, turns.TurnErasure]:
    """(the source before, after, the receipt, what went)."""
    validation.identifier("appended_by", appended_by)
    with uow.write(caller.tenant_id) as tx:
        stored = tx.sources.require(source_id)
        before = stored.source
        records = tx.sources.turn_records([stored.pk]).get(stored.pk, [])
        appended = turns.attributed(records, len(before.body.messages))
        plan = turns.erase_appended(
            before.body.messages, appended, appended_by, before.provenance.principal_id
        )
        updated = source_transitions.erase_turns(
            before,
            expected_revision=expected_revision,
            messages=plan.messages,
            now_us=clock(),
        )
        if not plan.turns_erased:
            raise invalid_field("appended_by", "wrote no turn of this conversation")
        if not plan.messages:
            raise invalid_field(
                "appended_by", "wrote every message of this conversation: erase it whole"
            )
        # The facts of what is left (rules: fast enough to run under the write lock).
        triples = extraction.triples(Body(messages=plan.messages))
        event = TurnsErased(
            source_id,
            updated.revision,
            appended_by,
            plan.turns_erased,
            plan.messages_erased,
            len(plan.messages),
        )
        _, receipt = changes.apply(
            tx,
            caller,
            stored,
            Change(
                Transition.ERASE_TURNS,
                updated,
                Action.SOURCE_TURNS_ERASE,
                event,
                triples,
                erased=plan,
            ),
        )
    return before, updated, receipt, plan
