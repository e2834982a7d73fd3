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
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import MessagesAppended
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.sources import Body, Message, SaveIntent, Source, Status
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.source_changes import Change, SourceChanges
from runtime_svc.services.source_reads import check_source_id
from runtime_svc.storage.transaction import Transaction
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
    source: Source
    receipt: Receipt
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
        if cmd.labels:
            raise invalid_field("metadata.labels", "labels are given at insert, not appended")
        insert_policy.check_intent(cmd.intent)
        validation.identifier("request_id", caller.request_id, required=False)
        added = Body(messages=cmd.messages)
        steers = insert_policy.steering(added)
        triples = self._extraction.triples(added)  # before the write lock (rules: fast)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(cmd.source_id)
            before = stored.source
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
                    Transition.APPEND, grown, Action.MESSAGES_APPEND, event, _after(triples, first)
                ),
            )
        return Appended(
            grown,
            receipt,
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
