"""Use cases: insert memories, list and read sources, change a source's classification."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmem.core import paging, validation
from agentmem.core.errors import AgentmemError, Reason, invalid_field, revision_mismatch
from runtime_svc.domain import insert_policy, sources, thread_mode
from runtime_svc.domain import review as reviewing
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import (
    InsertPolicyUpdated,
    MemoryInserted,
    MemoryReviewed,
    SourceClassificationUpdated,
)
from runtime_svc.domain.facts import Triple
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.sources import Classification, SaveIntent, Source, SourceKind, Status
from runtime_svc.services.clock import Clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.journal import Journal, Target
from runtime_svc.storage.sources import SourceFilter, Stored, Summary
from runtime_svc.storage.unit_of_work import Transaction, UnitOfWork

INSERTABLE_KINDS = {SourceKind.MEMORY, SourceKind.CONVERSATION, SourceKind.LEGACY}


@dataclass(frozen=True)
class InsertCommand:
    content: str = ""
    messages: list[tuple[str, str]] = field(default_factory=list)
    thread_id: str = ""
    kind: str = ""
    intent: SaveIntent = field(default_factory=SaveIntent)
    labels: dict[str, str] = field(default_factory=dict)
    validate_only: bool = False


@dataclass(frozen=True)
class Inserted:
    source_id: str
    revision: int
    status: Status
    receipt: Receipt | None
    deduplicated: bool = False


@dataclass(frozen=True)
class Prepared:
    body: sources.Body
    kind: SourceKind
    labels: dict[str, str]
    triples: list[Triple]


@dataclass(frozen=True)
class Reviewed:
    source: Source
    receipt: Receipt


@dataclass(frozen=True)
class ClassificationChange:
    previous: Classification
    source: Source
    receipt: Receipt


class Memories:
    def __init__(
        self,
        uow: UnitOfWork,
        journal: Journal,
        clock: Clock,
        *,
        policy: insert_policy.InsertPolicy,
        default_mode: thread_mode.Mode,
        extraction: FactExtraction,
        allow_self_approval: bool = False,
    ) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock
        self._policy, self._default_mode = policy, default_mode
        self._extraction = extraction
        self._allow_self_approval = allow_self_approval

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
        body = sources.check_body(cmd.content, cmd.messages)
        kind = _kind(cmd.kind, body)
        validation.identifier("thread_id", cmd.thread_id, required=False)
        validation.identifier("request_id", caller.request_id, required=False)
        labels = sources.check_labels(cmd.labels)
        insert_policy.check_intent(cmd.intent)
        if cmd.validate_only:
            with self._uow.read(caller.tenant_id) as tx:
                status = insert_policy.decide(self.policy_in_force(tx)[0], cmd.intent)
                self._check_thread(tx, cmd.thread_id)
            return Inserted("", 0, status, None)
        return Prepared(body, kind, labels, self._extraction.triples(body))

    def commit_insert(self, caller: Caller, cmd: InsertCommand, prepared: Prepared) -> Inserted:
        body, kind, labels = prepared.body, prepared.kind, prepared.labels
        with self._uow.write(caller.tenant_id) as tx:
            if caller.request_id:
                earlier = tx.sources.by_request_id(caller.request_id)
                if earlier is not None:
                    return _replay(tx, earlier, body)
            status = insert_policy.decide(self.policy_in_force(tx)[0], cmd.intent)
            self._check_thread(tx, cmd.thread_id)
            now = self._clock()
            source = Source(
                source_id=new_id("src"),
                revision=1,
                kind=kind,
                classification=Classification.ACTIVE,
                status=status,
                thread_id=cmd.thread_id,
                body=body,
                provenance=sources.Provenance(
                    caller.principal_id, caller.principal_kind, caller.surface, caller.request_id
                ),
                save_intent=cmd.intent,
                labels=labels,
                created_at_us=now,
                updated_at_us=now,
            )
            indexed = status is Status.ACTIVE
            pk = tx.sources.add(source, indexed=indexed)
            if indexed:
                tx.index.put(pk, body.generated_form(), eligible=source.indexable())
                tx.counters.indexed_docs += 1
                tx.embedding_queue.enqueue(pk, source.source_id)
                self._extraction.store(tx, source, prepared.triples, now)
            receipt = self._journal.record(
                tx,
                caller,
                action="memory.insert",
                target=Target("source", source.source_id, 1),
                event=MemoryInserted(source.source_id, 1, kind.value, status.value),
                at_us=now,
            )
        return Inserted(source.source_id, 1, status, receipt)

    def policy_in_force(self, tx: Transaction) -> tuple[insert_policy.InsertPolicy, int]:
        """The tenant's override if an admin set one, else the configured policy; and the
        override's revision (0 when there is none)."""
        override = tx.policies.get()
        if override is None:
            return self._policy, 0
        return insert_policy.InsertPolicy(override[0]), override[1]

    def current_policy(self, caller: Caller) -> tuple[str, int]:
        with self._uow.read(caller.tenant_id) as tx:
            policy, revision = self.policy_in_force(tx)
        return policy.value, revision

    def set_policy(
        self, caller: Caller, expected_revision: int, policy: insert_policy.InsertPolicy
    ) -> tuple[str, int, Receipt]:
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
                action="insert_policy.set",
                target=Target("tenant", caller.tenant_id, revision + 1),
                event=InsertPolicyUpdated(previous.value, policy.value, revision + 1),
                at_us=now,
            )
        return previous.value, revision + 1, receipt

    def review(
        self,
        caller: Caller,
        source_id: str,
        expected_revision: int,
        decision: reviewing.Decision,
        note: str,
        triples: list[Triple],
    ) -> Reviewed:
        """Approve (index it; a user's approval records user_confirmed) or reject."""
        check_source_id(source_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            now = self._clock()
            updated = reviewing.review(
                stored.source,
                expected_revision=expected_revision,
                decision=decision,
                reviewer=caller,
                note=note,
                allow_self_approval=self._allow_self_approval,
                now_us=now,
            )
            indexed_revision = 0
            if updated.status is Status.ACTIVE:
                tx.index.put(stored.pk, updated.body.generated_form(), eligible=updated.indexable())
                tx.counters.indexed_docs += 1
                tx.embedding_queue.enqueue(stored.pk, source_id)
                self._extraction.store(tx, updated, triples, now)
                indexed_revision = updated.revision
            tx.sources.save_state(stored.pk, updated, indexed_revision=indexed_revision)
            receipt = self._journal.record(
                tx,
                caller,
                action=f"memory.review.{decision.value}",
                target=Target("source", source_id, updated.revision),
                event=MemoryReviewed(
                    source_id,
                    updated.revision,
                    updated.status.value,
                    decision.value,
                    caller.principal_id,
                ),
                at_us=now,
            )
        return Reviewed(updated, receipt)

    def triples_of(self, caller: Caller, source_id: str) -> list[Triple]:
        """The facts a source's text yields (to approve it without holding the write lock)."""
        check_source_id(source_id)
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.get(source_id)
        return self._extraction.triples(stored.source.body) if stored else []

    def list_memories(
        self, caller: Caller, statuses: tuple[str, ...], page_size: int, page_token: str
    ) -> tuple[list[Source], str]:
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "memories", ",".join(statuses))
        after = paging.decode(page_token, key, "")
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page_memories(statuses, after, size + 1)
        more = len(rows) > size
        found = [r.source for r in rows[:size]]
        return found, paging.encode(key, found[-1].source_id) if more else ""

    def _check_thread(self, tx: Transaction, thread_id: str) -> None:
        if not thread_id:
            return
        state = tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default_mode)
        if state.mode is thread_mode.Mode.DISABLED:
            raise AgentmemError(Reason.THREAD_MEMORY_DISABLED)

    def get(self, caller: Caller, source_id: str, include_content: bool) -> tuple[Source, str]:
        """The source and its effective retrieval state."""
        check_source_id(source_id)
        if include_content and "memory.content.read" not in caller.scopes:
            raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": "memory.content.read"})
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
        return stored.source, stored.source.state(self._clock())

    def list(
        self, caller: Caller, f: SourceFilter, page_size: int, page_token: str
    ) -> tuple[list[Summary], str]:
        validation.identifier("filter.thread_id", f.thread_id, required=False)
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "sources", repr(f))
        after = paging.decode(page_token, key, "")
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page(f, after, size + 1, self._clock())
        more = len(rows) > size
        rows = rows[:size]
        return rows, paging.encode(key, rows[-1].source_id) if more else ""

    def classify(
        self, caller: Caller, source_id: str, expected_revision: int, classification: Classification
    ) -> ClassificationChange:
        check_source_id(source_id)
        with self._uow.write(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            now = self._clock()
            updated = sources.classify(
                stored.source,
                expected_revision=expected_revision,
                classification=classification,
                now_us=now,
            )
            indexed_revision = stored.indexed_revision
            if indexed_revision:
                tx.index.set_eligible(stored.pk, updated.indexable())
                indexed_revision = updated.revision
            tx.sources.save_state(stored.pk, updated, indexed_revision=indexed_revision)
            receipt = self._journal.record(
                tx,
                caller,
                action="source.classification.set",
                target=Target("source", source_id, updated.revision),
                event=SourceClassificationUpdated(
                    source_id,
                    stored.source.classification.value,
                    classification.value,
                    updated.revision,
                    now,
                ),
                at_us=now,
            )
        return ClassificationChange(stored.source.classification, updated, receipt)


def check_source_id(source_id: str) -> str:
    return validation.identifier("source_id", source_id)


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


def _replay(tx: Transaction, earlier: Stored, body: sources.Body) -> Inserted:
    """A retried insert: the first result, or an error if the request differs."""
    if earlier.source.body.sha256() != body.sha256():
        raise invalid_field("request_id", "was already used for a different request")
    receipts = tx.receipts.page(earlier.source.source_id, 0, 1)
    return Inserted(
        earlier.source.source_id,
        earlier.source.revision,
        earlier.source.status,
        receipts[0] if receipts else None,
        deduplicated=True,
    )
