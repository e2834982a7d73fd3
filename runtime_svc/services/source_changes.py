"""The one write path of sources: every lifecycle transition is applied here.

A use case decides the new state with the pure transition functions of the domain
(`runtime_svc.domain.sources`, `review`) and hands the result to `apply` (or `create` for a
new source). In the same transaction this purges or derives the derived records as the
lifecycle table says, saves the state through the one source writer (index scope and
counters included), and journals exactly one event and one receipt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runtime_svc.domain import events
from runtime_svc.domain.audit import Action, Claim, Erased, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.lifecycle import RULES, Derived, Phase, Transition
from runtime_svc.domain.sources import Source
from runtime_svc.domain.turns import TurnErasure, TurnTrust
from runtime_svc.services import derived, fact_chains
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.journal import Journal, Target
from runtime_svc.storage import turn_log
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class Change:
    transition: Transition
    source: Source  # the new state, from a domain transition function
    action: Action
    event: events.DomainEvent
    triples: Sequence[Triple] = ()  # the facts to store when the source becomes active
    at_us: int = 0  # when it happened, if not the new revision's time (a repeated revoke)
    claim: Claim | None = None  # an insert's save-intent claim, for its receipt
    erased: TurnErasure | None = None  # a partial erasure's plan (Transition.ERASE_TURNS)
    turn: TurnTrust | None = None  # an append: the trust its messages were given


class SourceChanges:
    def __init__(
        self,
        uow: UnitOfWork,
        journal: Journal,
        extraction: FactExtraction,
        after_erasure: Callable[[], None] = lambda: None,
    ) -> None:
        """`after_erasure`: called once an erasure committed, to scrub storage of its bytes
        (`services.erasure_finisher`); until then its physical part stays pending."""
        self._uow, self._journal, self._extraction = uow, journal, extraction
        self._after_erasure = after_erasure

    def create(self, tx: Transaction, caller: Caller, change: Change) -> tuple[Stored, Receipt]:
        """A new source (insert, admission): derived records only if it is active."""
        active = change.source.phase is Phase.ACTIVE
        stored = tx.writer.create(change.source, indexed=active)  # its index entry too
        if active:
            self._derive_beside_index(tx, stored, change)
        return stored, self._record(tx, caller, change)

    def apply(
        self, tx: Transaction, caller: Caller, stored: Stored, change: Change
    ) -> tuple[Stored, Receipt]:
        """Applies a transition that the domain allowed to a stored source."""
        effect = RULES[change.transition].derived
        if effect is Derived.REBUILD:
            return self._rebuild(tx, caller, stored, change)
        if effect in (Derived.PURGE, Derived.ERASE):
            derived.purge(tx, stored)
        grown = change.transition is Transition.APPEND
        by = (
            turn_log.Appender(
                caller.principal_id,
                caller.principal_kind,
                change.turn or TurnTrust(),
                caller.request_id,
            )
            if grown
            else None
        )
        updated = tx.writer.save(stored, change.source, by)
        if effect is Derived.EXTEND:
            updated = self._extend(tx, stored, updated, change)
        elif effect is Derived.BUILD and change.source.phase is Phase.ACTIVE:
            updated = self._derive(tx, updated, change)
        elif effect is Derived.KEEP:  # its statements' eligibility may have changed
            fact_chains.relink_source(tx, change.source.source_id)
        if effect is Derived.ERASE:
            tx.erasures.record(change.source.source_id, change.source.updated_at_us)
            tx.after_commit(self._after_erasure)
        return updated, self._record(tx, caller, change)

    def _rebuild(
        self, tx: Transaction, caller: Caller, stored: Stored, change: Change
    ) -> tuple[Stored, Receipt]:
        """A partial erasure: every derived record goes with the erased turns' bytes, then
        an active source's are derived again from what is left (`change.triples`: the
        facts of the messages kept). Its physical part is recorded and scrubbed, and the
        process's caches of memories' texts emptied, as after an erasure."""
        assert change.erased is not None
        derived.purge_for_rebuild(tx, stored)
        updated = tx.writer.erase_turns(stored, change.source, change.erased)
        if change.source.phase is Phase.ACTIVE:
            updated = self._derive(tx, updated, change)
        tx.erasures.record(change.source.source_id, change.source.updated_at_us)
        tx.after_commit(self._after_erasure)
        erased = Erased(change.erased.turns_erased, change.erased.messages_erased)
        return updated, self._record(tx, caller, change, erased)

    def _derive(self, tx: Transaction, stored: Stored, change: Change) -> Stored:
        stored = tx.writer.index(stored)
        self._derive_beside_index(tx, stored, change)
        return stored

    def _extend(self, tx: Transaction, before: Stored, updated: Stored, change: Change) -> Stored:
        """An append: the new messages' vectors and facts (`change.triples`) beside the
        source's others (their passages were written with the new state, `writer.save`). A
        source with no derived records yet (pending review, no index entry) gets none: its
        approval derives them all. An append that held an active source for review
        suspends what it has (its eligibility does) and drops its facts, which approval
        extracts again from the whole conversation."""
        if not updated.indexed_revision:
            return updated
        held = before.source.phase is Phase.ACTIVE and change.source.phase is not Phase.ACTIVE
        if held:
            derived.purge_facts(tx, updated)
            tx.embedding_queue.enqueue(updated.pk, updated.source.source_id)
            return updated
        self._derive_beside_index(tx, updated, change)
        return updated

    def _derive_beside_index(self, tx: Transaction, stored: Stored, change: Change) -> None:
        # Its vector is made off the write path, in commit order (hybrid retrieval on).
        tx.embedding_queue.enqueue(stored.pk, stored.source.source_id)
        keys = self._extraction.store(
            tx, stored.source, list(change.triples), stored.source.updated_at_us
        )
        fact_chains.relink(tx, keys)

    def _record(
        self, tx: Transaction, caller: Caller, change: Change, erased: Erased | None = None
    ) -> Receipt:
        s = change.source
        return self._journal.record(
            tx,
            caller,
            action=change.action,
            target=Target("source", s.source_id, s.revision),
            event=change.event,
            at_us=change.at_us or s.updated_at_us,
            claim=change.claim,
            erased=erased,
        )
