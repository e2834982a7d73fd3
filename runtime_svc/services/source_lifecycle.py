"""Use cases that move a source through its lifecycle: classify, review, revoke, revoke an
assent, erase; and readback of what is derived from it. Each is a thin caller: the domain
decides the new state, `SourceChanges.apply` writes it with everything it implies."""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract import scopes, validation
from agentmem.contract.errors import invalid_field
from agentmem.contract.scopes import Scope
from runtime_svc.adapters import assent as assent_verifier
from runtime_svc.domain import review, source_transitions
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.erasure import PhysicalErasure, physical_erasure
from runtime_svc.domain.events import (
    AssentRevoked,
    MemoryReviewed,
    SourceClassificationUpdated,
    SourceErased,
    SourceRevoked,
)
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.lifecycle import Phase, Transition
from runtime_svc.domain.sources import Classification, Source
from runtime_svc.domain.turns import TurnErasure
from runtime_svc.services import derived, turn_erasure
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.journal import Journal, Target
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.services.source_reads import check_source_id
from runtime_svc.storage.unit_of_work import UnitOfWork

MAX_REASON = 200


@dataclass(frozen=True)
class ClassifyCommand:
    source_id: str
    expected_revision: int
    classification: Classification


@dataclass(frozen=True)
class ReviewCommand:
    source_id: str
    expected_revision: int
    decision: review.Decision
    note: str = ""
    triples: tuple[Triple, ...] = ()  # extracted beforehand, outside the write lock


@dataclass(frozen=True)
class RevokeAssentCommand:
    source_id: str
    assent_id: str
    revocation: str = ""  # the owner's signed revocation; without it, admins only


@dataclass(frozen=True)
class EraseCommand:
    source_id: str
    expected_revision: int
    reason: str = ""
    appended_by: str = ""  # only the turns this principal appended (a partial erasure)


@dataclass(frozen=True)
class Changed:
    previous: Source
    source: Source
    receipt: Receipt
    turns_erased: TurnErasure | None = None  # a partial erasure: what went

    @property
    def state(self) -> str:
        return self.source.state(self.source.updated_at_us)


@dataclass(frozen=True)
class Readback:
    source_id: str
    state: str
    derivatives: list[derived.Derivative]
    retrievable_by: list[str]
    physical: PhysicalErasure

    @property
    def clean(self) -> bool:
        """No derived record stored or eligible, and no copy of erased bytes the runtime
        has yet to remove from the database's files."""
        purged = all(d.state == "purged" and not d.eligible for d in self.derivatives)
        return purged and not self.physical.pending


class SourceLifecycle:
    def __init__(
        self,
        uow: UnitOfWork,
        journal: Journal,
        clock: Clock,
        changes: SourceChanges,
        extraction: FactExtraction,
        *,
        review_settings: review.Settings = review.DEFAULTS,
    ) -> None:
        self._uow, self._journal, self._clock, self._changes = uow, journal, clock, changes
        self._extraction = extraction
        self._review_settings = review_settings

    def classify(self, caller: Caller, cmd: ClassifyCommand) -> Changed:
        check_source_id(cmd.source_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(cmd.source_id)
            now, before = self._clock(), stored.source
            updated = source_transitions.classify(
                before,
                expected_revision=cmd.expected_revision,
                classification=cmd.classification,
                now_us=now,
            )
            event = SourceClassificationUpdated(
                cmd.source_id,
                before.classification.value,
                updated.classification.value,
                updated.revision,
                now,
            )
            _, receipt = self._changes.apply(
                tx,
                caller,
                stored,
                Change(Transition.CLASSIFY, updated, Action.CLASSIFICATION_SET, event),
            )
        return Changed(before, updated, receipt)

    def triples_of(self, caller: Caller, source_id: str) -> list[Triple]:
        """The facts a pending source's text yields (to approve it without holding the write
        lock); none for a source that cannot be approved."""
        check_source_id(source_id)
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.get(source_id)
        if stored is None or stored.source.phase is not Phase.PENDING_REVIEW:
            return []
        return self._extraction.triples(stored.source.body)

    def review(self, caller: Caller, cmd: ReviewCommand) -> Changed:
        """Approve (derive its index entry and facts; a user's approval records
        user_confirmed) or reject. A revoked or erased source is refused."""
        check_source_id(cmd.source_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(cmd.source_id)
            now, before = self._clock(), stored.source
            updated = review.review(
                before,
                expected_revision=cmd.expected_revision,
                decision=cmd.decision,
                reviewer=caller,
                note=cmd.note,
                settings=self._review_settings,
                now_us=now,
                appenders=frozenset(tx.sources.appenders(stored.pk)),
            )
            approve = cmd.decision is review.Decision.APPROVE
            event = MemoryReviewed(
                cmd.source_id,
                updated.revision,
                updated.status.value,
                cmd.decision.value,
                caller.principal_id,
            )
            _, receipt = self._changes.apply(
                tx,
                caller,
                stored,
                Change(
                    cmd.decision.transition,
                    updated,
                    Action.REVIEW_APPROVE if approve else Action.REVIEW_REJECT,
                    event,
                    cmd.triples if approve else (),
                ),
            )
        return Changed(before, updated, receipt)

    def revoke(self, caller: Caller, source_id: str, reason: str) -> Changed:
        check_source_id(source_id)
        check_reason(reason)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            now, before = self._clock(), stored.source
            updated = source_transitions.revoke(before, now_us=now)
            _, receipt = self._changes.apply(
                tx, caller, stored, _revoked(Transition.REVOKE, updated, Action.SOURCE_REVOKE, now)
            )
        return Changed(before, updated, receipt)

    def revoke_assent(self, caller: Caller, cmd: RevokeAssentCommand) -> Changed:
        check_source_id(cmd.source_id)
        validation.identifier("assent_id", cmd.assent_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(cmd.source_id)
            before = stored.source
            if cmd.revocation:
                assent_verifier.verify_revocation(
                    cmd.revocation,
                    owner=before.canonical_owner,
                    source_id=cmd.source_id,
                    assent_id=cmd.assent_id,
                    keys=tx.owner_keys.get,
                )
            else:
                scopes.require(caller.scopes, Scope.ADMIN)
            now = self._clock()
            if before.assent_id == cmd.assent_id:
                updated = source_transitions.revoke(before, now_us=now, assent=True)
                tx.revoked_assents.add(cmd.assent_id, cmd.source_id, now)
                _, receipt = self._changes.apply(
                    tx,
                    caller,
                    stored,
                    _revoked(Transition.REVOKE_ASSENT, updated, Action.ASSENT_REVOKE, now),
                )
                return Changed(before, updated, receipt)
            # A past or future assent: nothing live to revoke, but it can never be used again.
            tx.revoked_assents.add(cmd.assent_id, cmd.source_id, now)
            receipt = self._journal.record(
                tx,
                caller,
                action=Action.ASSENT_REVOKE,
                target=Target("source", cmd.source_id, before.revision),
                event=AssentRevoked(cmd.source_id, cmd.assent_id, before.revision),
                at_us=now,
            )
        return Changed(before, before, receipt)

    def erase(self, caller: Caller, cmd: EraseCommand) -> Changed:
        """The whole source for good; or, with `appended_by`, only the turns that principal
        appended to the conversation (`turn_erasure`)."""
        check_source_id(cmd.source_id)
        check_reason(cmd.reason)
        if cmd.appended_by:
            before, updated, receipt, plan = turn_erasure.erase_turns(
                self._uow,
                self._clock,
                self._changes,
                self._extraction,
                caller,
                source_id=cmd.source_id,
                expected_revision=cmd.expected_revision,
                appended_by=cmd.appended_by,
            )
            return Changed(before, updated, receipt, plan)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(cmd.source_id)
            now, before = self._clock(), stored.source
            updated = source_transitions.erase(
                before, expected_revision=cmd.expected_revision, now_us=now
            )
            _, receipt = self._changes.apply(
                tx,
                caller,
                stored,
                Change(Transition.ERASE, updated, Action.SOURCE_ERASE, SourceErased(cmd.source_id)),
            )
        return Changed(before, updated, receipt)

    def readback(self, caller: Caller, source_id: str) -> Readback:
        check_source_id(source_id)
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            now = self._clock()
            found = derived.readback(tx, stored, now)
            erased = bool(stored.source.erased_at_us)
            scrubbed = tx.erasures.scrubbed_at(source_id) if erased else 0
        # An erasure older than the record of physical parts counts as scrubbed: the
        # upgrade recorded it as pending, and the runtime then scrubbed storage.
        physical = physical_erasure(self._uow.backend, erased, 1 if scrubbed is None else scrubbed)
        live = {d.kind for d in found if d.eligible}
        surfaces = []
        if "index_entry" in live:
            surfaces += ["search", "prompt", "ask"]
        if "fact" in live:
            surfaces += ["fact_search", "profile"] + ([] if "ask" in surfaces else ["ask"])
        return Readback(source_id, stored.source.state(now), found, surfaces, physical)


def _revoked(transition: Transition, updated: Source, action: Action, now: int) -> Change:
    event = SourceRevoked(updated.source_id, updated.revision, updated.state(now))
    return Change(transition, updated, action, event, at_us=now)


def check_reason(reason: str) -> None:
    """A reason given for a change: short, and never stored or logged (it may hold text)."""
    if len(reason) > MAX_REASON or "\x00" in reason:
        raise invalid_field("reason", f"must be at most {MAX_REASON} characters")
