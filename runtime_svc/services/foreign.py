"""Use cases (seed 000): owner keys, admitting foreign sources with assent, revocation with
purge of every derived record, readback, and erasure for any source."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentmem.core import validation
from agentmem.core.errors import AgentmemError, Reason, revision_mismatch
from runtime_svc.domain import eligibility, foreign
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import (
    ForeignSourceAdmitted,
    ForeignSourceDenied,
    SourceErased,
    SourceRevoked,
)
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.services.clock import Clock
from runtime_svc.services.journal import Journal, Target
from runtime_svc.storage import vectors
from runtime_svc.storage.sources import Stored
from runtime_svc.storage.unit_of_work import Transaction, UnitOfWork


@dataclass(frozen=True)
class Outcome:
    source_id: str
    revision: int
    state: str
    receipt: Receipt


@dataclass(frozen=True)
class Derivative:
    kind: str
    derivative_id: str
    eligible: bool
    state: str  # stored | purged


@dataclass(frozen=True)
class Readback:
    source_id: str
    state: str
    derivatives: list[Derivative]

    @property
    def clean(self) -> bool:
        return all(d.state == "purged" and not d.eligible for d in self.derivatives)


class ForeignSources:
    def __init__(self, uow: UnitOfWork, journal: Journal, clock: Clock) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock

    # Owner keys

    def register_key(self, caller: Caller, owner: str, key_id: str, pem: str) -> Receipt:
        validation.identifier("owner_id", owner)
        validation.identifier("key_id", key_id)
        foreign.check_public_key(pem)
        with self._uow.write(caller.tenant_id) as tx:
            if tx.owner_keys.get(owner, key_id) is not None:
                raise validation.invalid_field("key_id", "is already registered for this owner")
            now = self._clock()
            tx.owner_keys.add(owner, key_id, pem, now)
            return self._journal.record(
                tx,
                caller,
                action="owner_key.register",
                target=Target("owner_key", key_id, 1),
                event=None,
                at_us=now,
            )

    def revoke_key(self, caller: Caller, owner: str, key_id: str) -> tuple[int, Receipt]:
        """Retires the key; every source admitted under it loses its assent at once."""
        with self._uow.write(caller.tenant_id) as tx:
            key = tx.owner_keys.get(owner, key_id)
            if key is None:
                raise AgentmemError(Reason.NOT_FOUND)
            now = self._clock()
            tx.owner_keys.revoke(owner, key_id, now)
            affected = 0
            for stored in tx.sources.by_owner_key(owner, key_id):
                if stored.source.assent_state == "valid":
                    self._set_state(
                        tx,
                        stored,
                        replace(stored.source, assent_state="invalid"),
                        now,
                        announce=caller,
                    )
                    affected += 1
            receipt = self._journal.record(
                tx,
                caller,
                action="owner_key.revoke",
                target=Target("owner_key", key_id, 2),
                event=None,
                at_us=now,
            )
        return affected, receipt

    # Admission

    def prepare(self, caller: Caller, owner: str, pointer: foreign.Pointer) -> tuple[str, str]:
        foreign.check_pointer(pointer, "")
        return foreign.identity(owner, pointer), caller.tenant_id

    def admit(
        self, caller: Caller, owner: str, pointer: foreign.Pointer, assent: str, body: str
    ) -> Outcome:
        foreign.check_pointer(pointer, body)
        source_id = foreign.identity(owner, pointer)
        denied: AgentmemError | None = None
        with self._uow.write(caller.tenant_id) as tx:
            now = self._clock()
            existing = tx.sources.get(source_id)
            try:
                if existing and existing.source.revoked_at_us:
                    raise AgentmemError(Reason.ASSENT_REVOKED, detail="source revoked")
                granted = foreign.verify_assent(
                    assent,
                    owner=owner,
                    source_id=source_id,
                    audience=caller.tenant_id,
                    digest=pointer.content_digest,
                    keys=tx.owner_keys.get,
                    is_revoked=tx.revoked_assents.contains,
                )
                if granted.expires_at_us <= now:
                    raise AgentmemError(Reason.ASSENT_EXPIRED)
            except AgentmemError as e:
                # A denial stores nothing but its receipt and event.
                denied = e
                self._journal.record(
                    tx,
                    caller,
                    action="foreign_source.deny",
                    target=Target("source", source_id, 0),
                    event=ForeignSourceDenied(source_id, e.reason.value),
                    at_us=now,
                )
            if denied is None:
                outcome = self._admit(tx, caller, existing, source_id, owner, pointer, granted, now)
        if denied is not None:
            raise denied
        return outcome

    def _admit(
        self,
        tx: Transaction,
        caller: Caller,
        existing: Stored | None,
        source_id: str,
        owner: str,
        pointer: foreign.Pointer,
        granted: foreign.Assent,
        now: int,
    ) -> Outcome:
        assent = {
            "assent_state": "valid",
            "assent_id": granted.assent_id,
            "assent_key_id": granted.key_id,
            "assent_expires_at_us": granted.expires_at_us,
        }
        if existing is None:
            source = Source(
                source_id=source_id,
                revision=1,
                kind=SourceKind.FOREIGN,
                classification=Classification.ACTIVE,
                status=Status.ACTIVE,
                thread_id="",
                body=Body(content=pointer.raw(), generated=pointer.indexed_text()),
                provenance=Provenance(
                    caller.principal_id, caller.principal_kind, caller.surface, caller.request_id
                ),
                save_intent=SaveIntent(),
                created_at_us=now,
                updated_at_us=now,
                canonical_owner=owner,
                **assent,
            )
            pk = tx.sources.add(source, indexed=True)
            tx.index.put(pk, source.body.generated_form(), eligible=source.indexable())
            tx.counters.indexed_docs += 1
            tx.embedding_queue.enqueue(pk, source_id)
        else:  # a fresh assent for the same identity
            source = replace(
                existing.source, revision=existing.source.revision + 1, updated_at_us=now, **assent
            )
            self._set_state(tx, existing, source, now)
        receipt = self._journal.record(
            tx,
            caller,
            action="foreign_source.admit",
            target=Target("source", source_id, source.revision),
            event=ForeignSourceAdmitted(source_id, source.revision),
            at_us=now,
        )
        return Outcome(source_id, source.revision, source.state(now), receipt)

    # Revocation, readback, erasure

    def revoke_source(self, caller: Caller, source_id: str, reason: str) -> Outcome:
        _check_reason(reason)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            return self._revoke(tx, caller, stored, "source.revoke")

    def revoke_assent(
        self, caller: Caller, source_id: str, assent_id: str, revocation: str
    ) -> Outcome:
        validation.identifier("assent_id", assent_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            owner = stored.source.canonical_owner
            if revocation:
                foreign.verify_revocation(
                    revocation,
                    owner=owner,
                    source_id=source_id,
                    assent_id=assent_id,
                    keys=tx.owner_keys.get,
                )
            elif "memory.admin" not in caller.scopes:
                raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": "memory.admin"})
            now = self._clock()
            tx.revoked_assents.add(assent_id, source_id, now)
            if stored.source.assent_id == assent_id:
                return self._revoke(tx, caller, stored, "assent.revoke")
            # a past or future assent: nothing live to revoke, but it is recorded
            receipt = self._journal.record(
                tx,
                caller,
                action="assent.revoke",
                target=Target("source", source_id, stored.source.revision),
                event=None,
                at_us=now,
            )
            return Outcome(source_id, stored.source.revision, stored.source.state(now), receipt)

    def _revoke(self, tx: Transaction, caller: Caller, stored: Stored, action: str) -> Outcome:
        now = self._clock()
        source = stored.source
        if not source.revoked_at_us:
            source = replace(
                source, revoked_at_us=now, revision=source.revision + 1, updated_at_us=now
            )
            tx.sources.save_state(stored.pk, source, indexed_revision=0)
        self._purge(tx, stored, erase_bytes=False)
        receipt = self._journal.record(
            tx,
            caller,
            action=action,
            target=Target("source", source.source_id, source.revision),
            event=SourceRevoked(source.source_id, source.revision, source.state(now)),
            at_us=now,
        )
        return Outcome(source.source_id, source.revision, source.state(now), receipt)

    def erase(self, caller: Caller, source_id: str, expected_revision: int, reason: str) -> Receipt:
        _check_reason(reason)
        validation.non_negative("expected_revision", expected_revision)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            if expected_revision != stored.source.revision:
                raise revision_mismatch(f"source/{source_id}", stored.source.revision)
            now = self._clock()
            source = replace(
                stored.source,
                revision=stored.source.revision + 1,
                revoked_at_us=stored.source.revoked_at_us or now,
                erased_at_us=now,
                updated_at_us=now,
                save_intent=SaveIntent(
                    stored.source.save_intent.intent, stored.source.save_intent.source, ""
                ),
            )
            tx.sources.save_state(stored.pk, source, indexed_revision=0)
            self._purge(tx, stored, erase_bytes=True)
            return self._journal.record(
                tx,
                caller,
                action="source.erase",
                target=Target("source", source_id, source.revision),
                event=SourceErased(source_id),
                at_us=now,
            )

    def readback(self, caller: Caller, source_id: str) -> Readback:
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            state = stored.source.state(self._clock())
            live = state == eligibility.State.ELIGIBLE.value
            generated = tx.sources.derived_forms(stored.pk)[0]
            out = [
                _derivative("index_entry", f"{source_id}#index", tx.index.has(stored.pk), live),
                _derivative("generated_form", f"{source_id}#generated", generated, live),
            ]
            out += [
                _derivative("fact", fact_id, True, live)
                for _, fact_id in tx.facts.ids_for_source(source_id)
            ]
            out += [
                _derivative("prompt_record", rid, True, live)
                for rid in tx.prompt_records.citing(source_id)
            ]
            out += [
                _derivative(kind, vid, True, live)
                for kind, vid in vectors.readback(tx.conn, tx.sources.tenant_id, source_id)
            ]
        return Readback(source_id, state, out)

    # Shared steps

    def _set_state(
        self,
        tx: Transaction,
        stored: Stored,
        source: Source,
        now: int,
        announce: Caller | None = None,
    ) -> None:
        """Saves a new revision of the source and re-derives its index entry's scope."""
        if source.revision == stored.source.revision:
            source = replace(source, revision=source.revision + 1, updated_at_us=now)
        indexed = tx.index.has(stored.pk)
        if indexed:
            tx.index.set_eligible(stored.pk, source.indexable())
        tx.sources.save_state(stored.pk, source, indexed_revision=source.revision if indexed else 0)
        if announce is not None:
            self._journal.record(
                tx,
                announce,
                action="assent.invalidate",
                target=Target("source", source.source_id, source.revision),
                event=SourceRevoked(source.source_id, source.revision, source.state(now)),
                at_us=now,
            )

    def _purge(self, tx: Transaction, stored: Stored, *, erase_bytes: bool) -> None:
        """Every derived record of the source: its index entry, generated form, facts,
        vectors and the prompt records that cited it."""
        if tx.index.has(stored.pk):
            tx.index.remove(stored.pk)
            tx.counters.indexed_docs -= 1
        tx.sources.purge_derived_forms(stored.pk, erase_bytes=erase_bytes)
        tx.facts.purge_for_source(stored.source.source_id)
        tx.prompt_records.purge_citing(stored.source.source_id)
        vectors.purge(tx.conn, tx.sources.tenant_id, stored.source.source_id)


def _derivative(kind: str, derivative_id: str, stored: bool, source_live: bool) -> Derivative:
    return Derivative(
        kind, derivative_id, eligible=stored and source_live, state="stored" if stored else "purged"
    )


def _check_reason(reason: str) -> None:
    if len(reason) > 200 or "\x00" in reason:
        raise validation.invalid_field("reason", "must be at most 200 characters")
