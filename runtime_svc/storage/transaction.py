"""A transaction of one tenant: its connection and the repositories over it, and what runs
once it committed (`UnitOfWork` opens it)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection

from runtime_svc.domain.passages import Decoded, Window
from runtime_svc.storage import event_log, repositories
from runtime_svc.storage.embedding_outbox import VectorOutbox
from runtime_svc.storage.erasures import PhysicalErasures
from runtime_svc.storage.fact_links import FactLinks
from runtime_svc.storage.facts import FactRepository
from runtime_svc.storage.foreign import OwnerKeys, RevokedAssents
from runtime_svc.storage.index_changes import IndexChange, IndexChanged, WordsGone
from runtime_svc.storage.pending_rows import PendingRows
from runtime_svc.storage.postings import Postings
from runtime_svc.storage.prompt_records import PromptRecords
from runtime_svc.storage.shown_sources import ShownSource
from runtime_svc.storage.source_writer import SourceWriter
from runtime_svc.storage.sources import SourceRepository
from runtime_svc.storage.tenant_policies import Override, TenantPolicies

WordsRemoved = Callable[[str, list[str]], None]  # (tenant, words) once committed


class Transaction:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        vectors_queued: Callable[[], None] | None = None,
        window: Window | None = None,
        words_removed: WordsRemoved | None = None,
        policies_known: dict[str, Override | None] | None = None,
        journal_rows: event_log.JournalRows | None = None,
        index_changed: IndexChanged | None = None,
        outbox_rows: PendingRows | None = None,
    ) -> None:
        """`index_changed`: told, once the transaction committed, of what it changed in the
        tenant's search index (postings held in memory follow it). `journal_rows`,
        `outbox_rows`: inside a group commit, where appended rows wait to be written."""
        self.conn = conn
        self.window = window or Window()
        # Conversations decoded by this transaction's searches, by (source pk, revision):
        # both sides of a hybrid search and the prompt block share one decoding.
        self.decoded: dict[tuple[int, int], Decoded] = {}
        # What a hit shows of the sources its searches' checks read, by pk: both sides of a
        # hybrid search read a long session's row once (its stored form is most of it).
        self.shown: dict[int, ShownSource] = {}
        self._on_words_removed = words_removed
        self._on_index_changed = index_changed
        self._index_changes: list[IndexChange] = []
        self.tenant = repositories.TenantStateRepository(conn, tenant_id)
        self.thread_modes = repositories.ThreadModeRepository(conn, tenant_id)
        self.events = event_log.EventLog(conn, tenant_id, journal_rows)
        self.receipts = event_log.ReceiptChain(conn, tenant_id, journal_rows)
        self.sources = SourceRepository(conn, tenant_id)
        self.index = Postings(
            conn,
            tenant_id,
            stamp=lambda: self.counters.next_index_stamp(),
            words_removed=self._words_removed,
            changed=None if index_changed is None else self._index_changed,
        )
        self.prompt_records = PromptRecords(conn, tenant_id)
        self.policies = TenantPolicies(conn, tenant_id, policies_known)
        self.facts = FactRepository(conn, tenant_id)
        self.fact_links = FactLinks(conn, tenant_id)
        self.owner_keys = OwnerKeys(conn, tenant_id)
        self.revoked_assents = RevokedAssents(conn, tenant_id)
        self.erasures = PhysicalErasures(conn, tenant_id)
        self.counters = repositories.TenantCounters()
        self.writer = SourceWriter(self.sources, self.index, lambda: self.counters, self.window)
        self._after_commit: list[Callable[[], None]] = []
        self.embedding_queue = VectorOutbox(
            conn,
            tenant_id,
            None if vectors_queued is None else lambda: self.after_commit(vectors_queued),
            outbox_rows,
        )

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._after_commit.append(callback)

    def _words_removed(self, words: list[str]) -> None:
        """Words the index no longer has: stamped for every process holding the tenant's
        postings, and forgotten by this one's at once when the change commits."""
        self.counters.words_removed()
        told, tenant_id = self._on_words_removed, self.tenant.tenant_id
        if told is not None:
            self.after_commit(lambda: told(tenant_id, words))
        if self._on_index_changed is not None:
            self._index_changed(WordsGone(self.counters.words_removed_at, words))

    def _index_changed(self, change: IndexChange) -> None:
        """A stamped change of the index, told (with the others) once committed."""
        changes, told = self._index_changes, self._on_index_changed
        if not changes and told is not None:
            tenant_id = self.tenant.tenant_id
            self.after_commit(lambda: told(tenant_id, changes))
        changes.append(change)
