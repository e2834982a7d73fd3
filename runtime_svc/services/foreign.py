"""Use cases of foreign sources: owner keys, and admission of thin pointers with the owner's
signed assent. Revocation, readback and erasure are lifecycle use cases of every source
(`runtime_svc.services.source_lifecycle`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, Reason, invalid_field
from runtime_svc.adapters import assent as assent_verifier
from runtime_svc.domain import foreign, source_transitions
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import (
    ForeignSourceAdmitted,
    ForeignSourceDenied,
    OwnerKeyRegistered,
    OwnerKeyRevoked,
    SourceRevoked,
)
from runtime_svc.domain.lifecycle import Phase, Transition
from runtime_svc.domain.sources import (
    AssentState,
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
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class AdmitCommand:
    canonical_owner: str
    pointer: foreign.Pointer
    assent: str
    body: str = ""  # anything here is refused: a foreign source is a thin pointer


@dataclass(frozen=True)
class Outcome:
    source_id: str
    revision: int
    state: str
    receipt: Receipt


@dataclass(frozen=True)
class KeyRetired:
    sources_affected: int
    receipt: Receipt


class ForeignSources:
    def __init__(
        self, uow: UnitOfWork, journal: Journal, clock: Clock, changes: SourceChanges
    ) -> None:
        self._uow, self._journal, self._clock, self._changes = uow, journal, clock, changes

    # Owner keys

    def register_key(self, caller: Caller, owner: str, key_id: str, pem: str) -> Receipt:
        validation.identifier("owner_id", owner)
        validation.identifier("key_id", key_id)
        assent_verifier.check_public_key(pem)
        with self._uow.write(caller.tenant_id) as tx:
            if tx.owner_keys.get(owner, key_id) is not None:
                raise invalid_field("key_id", "is already registered for this owner")
            now = self._clock()
            tx.owner_keys.add(owner, key_id, pem, now)
            return self._journal.record(
                tx,
                caller,
                action=Action.OWNER_KEY_REGISTER,
                target=Target("owner_key", key_id, 1),
                event=OwnerKeyRegistered(owner, key_id),
                at_us=now,
            )

    def revoke_key(self, caller: Caller, owner: str, key_id: str) -> KeyRetired:
        """Retires the key; every live source admitted under it loses its assent at once."""
        validation.identifier("owner_id", owner)
        validation.identifier("key_id", key_id)
        with self._uow.write(caller.tenant_id) as tx:
            if tx.owner_keys.get(owner, key_id) is None:
                raise AgentmemError(Reason.NOT_FOUND)
            now = self._clock()
            tx.owner_keys.revoke(owner, key_id, now)
            affected = 0
            for stored in tx.sources.by_owner_key(owner, key_id):
                s = stored.source
                if s.assent_state == AssentState.VALID and s.phase not in (
                    Phase.REVOKED,
                    Phase.ERASED,
                ):
                    updated = source_transitions.invalidate_assent(s, now_us=now)
                    event = SourceRevoked(s.source_id, updated.revision, updated.state(now))
                    self._changes.apply(
                        tx,
                        caller,
                        stored,
                        Change(
                            Transition.INVALIDATE_ASSENT, updated, Action.ASSENT_INVALIDATE, event
                        ),
                    )
                    affected += 1
            receipt = self._journal.record(
                tx,
                caller,
                action=Action.OWNER_KEY_REVOKE,
                target=Target("owner_key", key_id, 2),
                event=OwnerKeyRevoked(owner, key_id, affected),
                at_us=now,
            )
        return KeyRetired(affected, receipt)

    # Admission

    def prepare(self, caller: Caller, owner: str, pointer: foreign.Pointer) -> tuple[str, str]:
        validation.identifier("canonical_owner", owner)
        foreign.check_pointer(pointer, "")
        return foreign.identity(owner, pointer), caller.tenant_id

    def admit(self, caller: Caller, cmd: AdmitCommand) -> Outcome:
        validation.identifier("canonical_owner", cmd.canonical_owner)
        foreign.check_pointer(cmd.pointer, cmd.body)
        source_id = foreign.identity(cmd.canonical_owner, cmd.pointer)
        denied: AgentmemError | None = None
        with self._uow.write(caller.tenant_id) as tx:
            now = self._clock()
            existing = tx.sources.get(source_id)
            try:
                if existing and existing.source.phase in (Phase.REVOKED, Phase.ERASED):
                    raise AgentmemError(Reason.ASSENT_REVOKED, detail="source revoked")
                granted = assent_verifier.verify_assent(
                    cmd.assent,
                    owner=cmd.canonical_owner,
                    source_id=source_id,
                    audience=caller.tenant_id,
                    digest=cmd.pointer.content_digest,
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
                    action=Action.FOREIGN_SOURCE_DENY,
                    target=Target("source", source_id, 0),
                    event=ForeignSourceDenied(source_id, e.reason.value),
                    at_us=now,
                )
            if denied is None:
                outcome = self._admit(tx, caller, existing, source_id, cmd, granted, now)
        if denied is not None:
            raise denied
        return outcome

    def _admit(
        self,
        tx: Transaction,
        caller: Caller,
        existing: Stored | None,
        source_id: str,
        cmd: AdmitCommand,
        granted: foreign.Assent,
        now: int,
    ) -> Outcome:
        if existing is None:
            fresh = Source(
                source_id=source_id,
                revision=1,
                kind=SourceKind.FOREIGN,
                classification=Classification.ACTIVE,
                status=Status.ACTIVE,
                thread_id="",
                body=Body(content=cmd.pointer.raw(), generated=cmd.pointer.indexed_text()),
                provenance=Provenance(
                    caller.principal_id, caller.principal_kind, caller.surface, caller.request_id
                ),
                save_intent=SaveIntent(),
                created_at_us=now,
                updated_at_us=now,
                canonical_owner=cmd.canonical_owner,
            )
            source = source_transitions.with_assent(fresh, granted)
            transition = Transition.ADMIT
        else:  # a fresh assent for the same identity
            source = source_transitions.readmit(existing.source, assent=granted, now_us=now)
            transition = Transition.READMIT
        change = Change(
            transition,
            source,
            Action.FOREIGN_SOURCE_ADMIT,
            ForeignSourceAdmitted(source_id, source.revision),
        )
        if existing is None:
            _, receipt = self._changes.create(tx, caller, change)
        else:
            _, receipt = self._changes.apply(tx, caller, existing, change)
        return Outcome(source_id, source.revision, source.state(now), receipt)
