"""Use cases: insert memories, list and read sources, change a source's classification."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmem.core import paging, validation
from agentmem.core.errors import AgentmemError, Reason, invalid_field
from runtime_svc.domain import eligibility, insert_policy, sources, thread_mode
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import MemoryInserted, SourceClassificationUpdated
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.sources import Classification, SaveIntent, Source, SourceKind, Status
from runtime_svc.services.clock import Clock
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
    ) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock
        self._policy, self._default_mode = policy, default_mode

    def insert(self, caller: Caller, cmd: InsertCommand) -> Inserted:
        body = sources.check_body(cmd.content, cmd.messages)
        kind = _kind(cmd.kind, body)
        validation.identifier("thread_id", cmd.thread_id, required=False)
        validation.identifier("request_id", caller.request_id, required=False)
        labels = sources.check_labels(cmd.labels)
        status = insert_policy.decide(self._policy, cmd.intent)
        if cmd.validate_only:
            with self._uow.read(caller.tenant_id) as tx:
                self._check_thread(tx, cmd.thread_id)
            return Inserted("", 0, status, None)
        with self._uow.write(caller.tenant_id) as tx:
            if caller.request_id:
                earlier = tx.sources.by_request_id(caller.request_id)
                if earlier is not None:
                    return _replay(tx, earlier, body)
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
                tx.index.put(pk, body.generated_form(), eligible=_indexable(source))
                tx.counters.indexed_docs += 1
            receipt = self._journal.record(
                tx,
                caller,
                action="memory.insert",
                target=Target("source", source.source_id, 1),
                event=MemoryInserted(source.source_id, 1, kind.value, status.value),
                at_us=now,
            )
        return Inserted(source.source_id, 1, status, receipt)

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
            stored = _found(tx.sources.get(source_id))
        state = eligibility.effective_state(stored.source.eligibility_row(), self._clock())
        return stored.source, state.value

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
            stored = _found(tx.sources.get(source_id))
            now = self._clock()
            updated = sources.classify(
                stored.source,
                expected_revision=expected_revision,
                classification=classification,
                now_us=now,
            )
            indexed_revision = stored.indexed_revision
            if indexed_revision:
                tx.index.set_eligible(stored.pk, _indexable(updated))
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


def _found(stored: Stored | None) -> Stored:
    if stored is None:
        raise AgentmemError(Reason.NOT_FOUND)
    return stored


def _indexable(source: Source) -> bool:
    return eligibility.eligible_regardless_of_time(source.eligibility_row())


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
