"""Use case: append the next messages of a stored conversation, a session that grows as it
happens. An append is a lifecycle transition (`Transition.APPEND`): revision CAS, the
derived records extended, one event and one receipt, through `SourceChanges.apply`.

The appended messages meet what an insert's would: the message rules and the limits (of
the conversation they make), the insert policy and the caller's trusted save intents, the
instruction-like check, the thread's memory mode, the tenant's byte quota. What would
store an insert pending review holds the conversation for review; its classification,
labels and save intent stay.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, Reason, invalid_field
from runtime_svc.domain import insert_policy, source_transitions, sources, thread_mode
from runtime_svc.domain.audit import Action, Claim, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import MessagesAppended
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.sources import Body, Message, SaveIntent, Source, Status
from runtime_svc.domain.turns import TurnTrust
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.inserts import REPLAYABLE
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.services.source_reads import check_source_id
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.turn_log import Turn
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class AppendCommand:
    source_id: str
    expected_revision: int
    messages: tuple[Message, ...]
    intent: SaveIntent = field(default_factory=SaveIntent)
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Appended:
    source: Source  # its state now (a conversation read as its tail)
    receipt: Receipt
    revision: int  # the revision the append made
    message_count: int  # the conversation's messages with the append's
    held_reason: str = ""  # the claimed save intent was not trusted: why, in words
    hold_reason: str = ""  # these messages read as instructions ("instruction_like")


class Appends:
    def __init__(
        self,
        uow: UnitOfWork,
        clock: Clock,
        changes: SourceChanges,
        extraction: FactExtraction,
        *,
        policy: insert_policy.InsertPolicy,
        default_mode: thread_mode.Mode,
        quotas: StoredQuotas | None = None,
        limits: sources.BodyLimits = sources.DEFAULT_LIMITS,
    ) -> None:
        self._uow, self._clock, self._changes = uow, clock, changes
        self._extraction, self._policy, self._default_mode = extraction, policy, default_mode
        self._quotas, self._limits = quotas, limits

    def append(self, caller: Caller, cmd: AppendCommand) -> Appended:
        check_source_id(cmd.source_id)
        validation.non_negative("expected_revision", cmd.expected_revision)
        if not cmd.messages:
            raise invalid_field("messages", "give at least one message")
        sources.check_messages(cmd.messages, self._limits)
        sources.check_said_times(self._clock(), cmd.messages)
        if cmd.labels:
            raise invalid_field("metadata.labels", "labels are given at insert, not appended")
        insert_policy.check_intent(cmd.intent)
        validation.identifier("request_id", caller.request_id, required=False)
        added = Body(messages=cmd.messages)
        steers = insert_policy.steering(added)
        triples = self._extraction.triples(added)  # before the write lock (rules: fast)
        with self._uow.write(caller.tenant_id) as tx:
            # Its tail: the messages the new ones' passages show, and its size (not all).
            stored = tx.sources.tail(cmd.source_id, keep=tx.window.before)
            if caller.request_id:
                earlier = tx.sources.turn_by_request_id(caller.principal_id, caller.request_id)
                if earlier is not None:
                    return _replay(tx, stored, earlier, cmd, self._clock())
            before = stored.source
            if not steers and before.body.messages:  # an attack split across the append
                steers = insert_policy.steers_across(before.body.messages[-1], cmd.messages[0])
            grown = source_transitions.append(
                before,
                expected_revision=cmd.expected_revision,
                messages=cmd.messages,
                limits=self._limits,
                now_us=self._clock(),
            )
            decision = self._decide(tx, caller, cmd.intent, steers, before.thread_id, added)
            if decision.status is Status.PENDING_REVIEW:  # a pending one stays pending
                grown = replace(
                    grown,
                    status=Status.PENDING_REVIEW,
                    save_intent_held=grown.save_intent_held or decision.held,
                    hold_reason=decision.hold_reason or grown.hold_reason,
                )
            first = len(before.body.messages)
            event = MessagesAppended(
                grown.source_id,
                grown.revision,
                len(cmd.messages),
                len(grown.body.messages),
                grown.status.value,
            )
            _, receipt = self._changes.apply(
                tx,
                caller,
                stored,
                Change(
                    Transition.APPEND,
                    grown,
                    Action.MESSAGES_APPEND,
                    event,
                    _after(triples, first),
                    claim=Claim(cmd.intent.intent, decision.held),  # as an insert's receipt
                    turn=TurnTrust(
                        cmd.intent.intent,
                        decision.held,
                        decision.status is Status.PENDING_REVIEW,
                        decision.hold_reason,
                    ),
                ),
            )
        return Appended(
            grown,
            receipt,
            grown.revision,
            len(grown.body.messages),
            insert_policy.held_reason(cmd.intent.intent) if decision.held else "",
            decision.hold_reason,
        )

    def _decide(
        self,
        tx: Transaction,
        caller: Caller,
        intent: SaveIntent,
        steers: bool,
        thread_id: str,
        added: Body,
    ) -> insert_policy.InsertDecision:
        """What an insert of these messages would get: the status under the insert policy
        in force and the caller's trust, instruction-like text held; the thread's memory
        mode; the tenant's byte quota (no new memory)."""
        override = tx.policies.get()
        policy = insert_policy.InsertPolicy(override.insert_policy) if override else self._policy
        decided = insert_policy.decide(policy, intent, trusted=caller.trusted_save_intents)
        if thread_id:
            state = tx.thread_modes.get(thread_id) or thread_mode.default(
                thread_id, self._default_mode
            )
            if state.mode is thread_mode.Mode.DISABLED:
                raise AgentmemError(Reason.THREAD_MEMORY_DISABLED)
        if self._quotas is not None:
            self._quotas.check_insert(tx, caller, len(added.raw().encode()), new_memory=False)
        return insert_policy.hold_steering(decided, steers)


def _after(triples: list[Triple], first: int) -> list[Triple]:
    """Facts of the appended messages, named by their place in the whole conversation."""
    return [t if t.message is None else replace(t, message=t.message + first) for t in triples]


def _replay(
    tx: Transaction, stored: Stored, earlier: Turn, cmd: AppendCommand, now_us: int
) -> Appended:
    """A retried append (its request id seen): the first result, as an insert's retry gets
    it. The same request id for other messages or another source is refused; a source no
    longer eligible nor pending says so (REPLAYED_SOURCE_NOT_ACTIVE)."""
    if earlier.source_pk != stored.pk or earlier.rows != Body(messages=cmd.messages).raw():
        raise invalid_field("request_id", "was already used for a different request")
    s = stored.source
    state = s.state(now_us)
    if state not in REPLAYABLE:
        raise AgentmemError(
            Reason.REPLAYED_SOURCE_NOT_ACTIVE,
            metadata={"state": state, "source_id": s.source_id, "revision": str(s.revision)},
        )
    receipt = tx.receipts.of_revision(s.source_id, earlier.revision)
    assert receipt is not None  # written with the turn row, in its transaction
    return Appended(
        s,
        receipt,
        earlier.revision,
        earlier.first_message + len(cmd.messages),
        insert_policy.held_reason(cmd.intent.intent) if s.save_intent_held else "",
        s.hold_reason,
    )
