"""Use cases: insert a memory or a conversation under the tenant's insert policy; read and
set that policy."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentmem.contract import validation
from agentmem.contract.errors import (
    AgentmemError,
    FieldViolation,
    Reason,
    invalid_field,
    revision_mismatch,
)
from runtime_svc.domain import insert_policy, sources, thread_mode
from runtime_svc.domain.audit import Action, Claim, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.events import InsertPolicyUpdated, MemoryInserted
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.sources import Classification, SaveIntent, Source, SourceKind, Status
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.journal import Journal, Target
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork

INSERTABLE_KINDS = {SourceKind.MEMORY, SourceKind.CONVERSATION, SourceKind.LEGACY}
# The states in which a retried insert answers with the first result (its status and
# current revision); any other is refused naming the state.
REPLAYABLE = frozenset({State.ELIGIBLE.value, State.PENDING_REVIEW.value})


@dataclass(frozen=True)
class InsertCommand:
    content: str = ""
    messages: list[sources.Message] = field(default_factory=list)
    thread_id: str = ""
    kind: str = ""
    intent: SaveIntent = field(default_factory=SaveIntent)
    labels: dict[str, str] = field(default_factory=dict)
    validate_only: bool = False
    observed_at_us: int = 0  # when the content was said or true (0: when received)


@dataclass(frozen=True)
class Inserted:
    source_id: str
    revision: int
    status: Status
    receipt: Receipt | None
    deduplicated: bool = False
    # The claimed save intent was not trusted for the caller: why, in words ("" if not held).
    held_reason: str = ""
    # What the text says held it for review (`instruction_like`; "" if nothing did).
    hold_reason: str = ""


@dataclass(frozen=True)
class Prepared:
    body: sources.Body
    kind: SourceKind
    labels: dict[str, str]
    triples: list[Triple]
    steers: bool = False  # the text reads as instructions to the model (held for review)


@dataclass(frozen=True)
class PolicyChange:
    previous: str
    policy: str
    revision: int
    receipt: Receipt


class Inserts:
    def __init__(
        self,
        uow: UnitOfWork,
        journal: Journal,
        clock: Clock,
        changes: SourceChanges,
        *,
        policy: insert_policy.InsertPolicy,
        default_mode: thread_mode.Mode,
        extraction: FactExtraction,
        quotas: StoredQuotas | None = None,
        limits: sources.BodyLimits = sources.DEFAULT_LIMITS,
    ) -> None:
        self._uow, self._journal, self._clock, self._changes = uow, journal, clock, changes
        self._limits, self._quotas = limits, quotas
        self._policy, self._default_mode = policy, default_mode
        self._extraction = extraction

    def insert(self, caller: Caller, cmd: InsertCommand) -> Inserted:
        prepared = self.prepare(caller, cmd)
        if isinstance(prepared, Inserted):
            return prepared
        return self.commit_insert(caller, cmd, prepared)

    def prepare_blocks(self, cmd: InsertCommand) -> bool:
        """Whether `prepare` may block (reads the database, or calls a slow extractor)."""
        return cmd.validate_only or self._extraction.blocking

    def prepare(self, caller: Caller, cmd: InsertCommand) -> Prepared | Inserted:
        """Everything an insert needs that does not hold the write lock: checks, and the
        facts of the text (an extractor may be slow). A validate_only insert ends here."""
        body = sources.check_body(cmd.content, cmd.messages, self._limits)
        kind = _kind(cmd.kind, body)
        validation.identifier("thread_id", cmd.thread_id, required=False)
        validation.identifier("request_id", caller.request_id, required=False)
        labels = sources.check_labels(cmd.labels)
        insert_policy.check_intent(cmd.intent)
        sources.check_said_times(self._clock(), cmd.messages, cmd.observed_at_us)
        if cmd.validate_only:  # every check a real insert makes, with nothing stored
            prepared = Prepared(body, kind, labels, [], insert_policy.steering(body))
            with self._uow.read(caller.tenant_id) as tx:
                earlier = (
                    tx.sources.by_request_id(caller.principal_id, caller.request_id)
                    if caller.request_id
                    else None
                )
                if earlier is not None:
                    replayed = _replay(tx, earlier, cmd, prepared, self._clock())
                    return replace(replayed, receipt=None)
                decision = self._admit(tx, caller, cmd, prepared)
            return Inserted(
                "",
                0,
                decision.status,
                None,
                held_reason=_held(decision, cmd),
                hold_reason=decision.hold_reason,
            )
        triples = self._extraction.triples(body)
        return Prepared(body, kind, labels, triples, insert_policy.steering(body))

    def commit_insert(self, caller: Caller, cmd: InsertCommand, prepared: Prepared) -> Inserted:
        with self._uow.write(caller.tenant_id) as tx:
            if caller.request_id:
                earlier = tx.sources.by_request_id(caller.principal_id, caller.request_id)
                if earlier is not None:
                    return _replay(tx, earlier, cmd, prepared, self._clock())
            decision = self._admit(tx, caller, cmd, prepared)
            now = self._clock()
            source = Source(
                source_id=new_id("src"),
                revision=1,
                kind=prepared.kind,
                classification=Classification.ACTIVE,
                status=decision.status,
                thread_id=cmd.thread_id,
                body=prepared.body,
                provenance=sources.Provenance(
                    caller.principal_id, caller.principal_kind, caller.surface, caller.request_id
                ),
                save_intent=cmd.intent,
                save_intent_held=decision.held,
                hold_reason=decision.hold_reason,
                labels=prepared.labels,
                created_at_us=now,
                updated_at_us=now,
                observed_at_us=cmd.observed_at_us or now,
            )
            _, receipt = self._changes.create(
                tx,
                caller,
                Change(
                    Transition.INSERT,
                    source,
                    Action.MEMORY_INSERT,
                    MemoryInserted(source.source_id, 1, prepared.kind.value, decision.status.value),
                    prepared.triples,
                    claim=Claim(cmd.intent.intent, decision.held),
                ),
            )
        return Inserted(
            source.source_id,
            1,
            decision.status,
            receipt,
            held_reason=_held(decision, cmd),
            hold_reason=decision.hold_reason,
        )

    def _decide(
        self, tx: Transaction, caller: Caller, cmd: InsertCommand
    ) -> insert_policy.InsertDecision:
        policy = self.policy_in_force(tx)[0]
        return insert_policy.decide(policy, cmd.intent, trusted=caller.trusted_save_intents)

    def _admit(
        self, tx: Transaction, caller: Caller, cmd: InsertCommand, p: Prepared
    ) -> insert_policy.InsertDecision:
        """The checks against stored state, the same for a real and a validate_only insert:
        the tenant's quotas (under the row lock of a real insert: exact on any replica),
        the insert policy and the caller's trusted save intents (the status they give), the
        thread's memory mode."""
        if self._quotas is not None:
            self._quotas.check_insert(tx, caller, len(p.body.raw().encode()))
        decision = insert_policy.hold_steering(self._decide(tx, caller, cmd), p.steers)
        self._check_thread(tx, cmd.thread_id)
        return decision

    def policy_in_force(self, tx: Transaction) -> tuple[insert_policy.InsertPolicy, int]:
        """The tenant's override if an admin set one, else the configured policy; and the
        override's revision (0 when there is none)."""
        override = tx.policies.get()
        if override is None:
            return self._policy, 0
        return insert_policy.InsertPolicy(override.insert_policy), override.revision

    def current_policy(self, caller: Caller) -> tuple[str, int]:
        with self._uow.read(caller.tenant_id) as tx:
            policy, revision = self.policy_in_force(tx)
        return policy.value, revision

    def set_policy(
        self, caller: Caller, expected_revision: int, policy: insert_policy.InsertPolicy
    ) -> PolicyChange:
        validation.non_negative("expected_revision", expected_revision)
        with self._uow.write(caller.tenant_id) as tx:
            previous, revision = self.policy_in_force(tx)
            if expected_revision != revision:
                raise revision_mismatch("insert_policy", revision)
            now = self._clock()
            tx.policies.save(policy.value, revision + 1, now)
            receipt = self._journal.record(
                tx,
                caller,
                action=Action.INSERT_POLICY_SET,
                target=Target("tenant", caller.tenant_id, revision + 1),
                event=InsertPolicyUpdated(previous.value, policy.value, revision + 1),
                at_us=now,
            )
        return PolicyChange(previous.value, policy.value, revision + 1, receipt)

    def _check_thread(self, tx: Transaction, thread_id: str) -> None:
        if not thread_id:
            return
        state = tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default_mode)
        if state.mode is thread_mode.Mode.DISABLED:
            raise AgentmemError(Reason.THREAD_MEMORY_DISABLED)


def _kind(requested: str, body: sources.Body) -> SourceKind:
    if not requested:
        return SourceKind.CONVERSATION if body.messages else SourceKind.MEMORY
    kind = SourceKind(requested)
    if kind not in INSERTABLE_KINDS:
        raise invalid_field("source_kind", "foreign sources are admitted with AdmitForeignSource")
    if kind is SourceKind.MEMORY and body.messages:
        raise invalid_field("source_kind", "a MEMORY holds content, not messages")
    if kind is SourceKind.CONVERSATION and not body.messages:
        raise invalid_field("source_kind", "a CONVERSATION holds messages")
    return kind


def _held(decision: insert_policy.InsertDecision, cmd: InsertCommand) -> str:
    return insert_policy.held_reason(cmd.intent.intent) if decision.held else ""


def _replay(
    tx: Transaction, earlier: Stored, cmd: InsertCommand, prepared: Prepared, now_us: int
) -> Inserted:
    """A retried insert: the first result, if every field of the request is the same and
    the source is still active or pending review (what the first result said it was, or
    approved since). A source since revoked, erased, rejected or made cold is refused with
    REPLAYED_SOURCE_NOT_ACTIVE naming its state: its first result is no longer true."""
    s = earlier.source
    if not s.erased_at_us:  # an erased source keeps no bytes to compare with
        _check_same(s, cmd, prepared)
    state = s.state(now_us)
    if state not in REPLAYABLE:
        raise AgentmemError(
            Reason.REPLAYED_SOURCE_NOT_ACTIVE,
            metadata={"state": state, "source_id": s.source_id, "revision": str(s.revision)},
        )
    receipts = tx.receipts.page(s.source_id, 0, 1)
    return Inserted(
        s.source_id,
        s.revision,
        s.status,
        receipts[0] if receipts else None,
        deduplicated=True,
        held_reason=insert_policy.held_reason(cmd.intent.intent) if s.save_intent_held else "",
        hold_reason=s.hold_reason,
    )


def _check_same(s: Source, cmd: InsertCommand, prepared: Prepared) -> None:
    # A user's approval rewrites the save intent to user_confirmed: compare what was sent
    # only while it is still the sender's.
    rewritten = s.review is not None and s.save_intent.intent == "user_confirmed"
    same = (
        s.body.raw() == prepared.body.raw()
        and s.kind is prepared.kind
        and s.thread_id == cmd.thread_id
        and s.labels == prepared.labels
        and (rewritten or s.save_intent == cmd.intent)
        and cmd.observed_at_us in (0, s.observed_at_us)
    )
    if not same:  # named so the caller can find what its request id made (its own tenant's)
        raise AgentmemError(
            Reason.INVALID_FIELD,
            metadata={"source_id": s.source_id},
            violations=(FieldViolation("request_id", "was already used for a different request"),),
        )
