"""Unit of work: one transaction, its repositories, rollback unless committed.

`write()` takes the database write lock at BEGIN (SQLite `BEGIN IMMEDIATE`) and the tenant's
row lock (`SELECT ... FOR UPDATE` on PostgreSQL) before anything else, so every
read-check-write sequence inside it is serialized per tenant, and event and receipt
sequences are assigned in commit order. Callbacks registered with `after_commit` run once
it committed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection

from runtime_svc.domain.erasure import Backend
from runtime_svc.domain.passages import Window
from runtime_svc.storage import db_errors, embedding_outbox, event_log, repositories
from runtime_svc.storage.db import KEPT_READER_CACHE_KIB, Database, set_page_cache
from runtime_svc.storage.index_changes import IndexChanged
from runtime_svc.storage.pending_rows import PendingRows
from runtime_svc.storage.scrub import Scrubber
from runtime_svc.storage.tenant_policies import Override
from runtime_svc.storage.transaction import Transaction, WordsRemoved


@dataclass
class _Batch:
    """An open group-commit transaction: writes join it as savepoints."""

    conn: Connection
    journal: event_log.JournalRows
    outbox: PendingRows  # places queued for embedding (`embedding_outbox.VectorOutbox`)
    counters: dict[str, repositories.TenantCounters] = field(default_factory=dict)
    # Tenants' insert policy overrides as read under their row locks (one read per batch).
    policies: dict[str, Override | None] = field(default_factory=dict)
    # PostgreSQL: the last write's savepoint, released with the next one's start (or the
    # commit) in the same round trip.
    release_pending: bool = False
    after_commit: list[Callable[[], None]] = field(default_factory=list)


class UnitOfWork:
    def __init__(
        self,
        db: Database,
        *,
        vectors_queued: Callable[[], None] | None = None,
        window: Window | None = None,
        words_removed: WordsRemoved | None = None,
        busy_timeout_ms: int = 5000,
        index_changed: IndexChanged | None = None,
        committed: Callable[[], None] | None = None,
    ) -> None:
        """`vectors_queued`: hybrid retrieval is on; called after a commit that queued
        sources for embedding (None: nothing is queued). `window`: the context of each
        conversation passage. `words_removed`: told, once a change that removed words from
        a tenant's index committed, of the tenant and the words (postings held in memory
        forget them). `index_changed`: told, once a transaction committed, of what it
        changed in a tenant's search index (`storage.index_changes`). `committed`: called in the
        committing thread as each write transaction commits, holding the write turn (SQLite:
        `wal_checkpoints`)."""
        self._db = db
        self._committed = committed or (lambda: None)
        self._index_changed = index_changed
        self.window = window or Window()
        self._words_removed = words_removed
        self._vectors_queued = vectors_queued
        # SQLite has one writer at a time. Queueing writers here hands the lock over at once;
        # left to SQLite, waiting writers poll with sleeps of 1 to 100 ms (busy handler).
        self._write_turn = threading.Lock() if db.dialect == "sqlite" else contextlib.nullcontext()
        # On PostgreSQL each statement is a round trip: a savepoint's release travels with
        # the next statement that needs none of its results (SQLite runs one statement per
        # call, and a call costs microseconds).
        self._defer_release = db.dialect == "postgresql"
        self._local = threading.local()
        self._scrubber = Scrubber(db, busy_timeout_ms)
        self._kept_on: int | None = None  # the thread keeping a reader connection
        self._kept: Connection | None = None
        self._kept_busy = False

    @property
    def backend(self) -> Backend:
        return Backend(self._db.dialect)

    def scrub(self, wait_ms: int) -> bool:
        """After erasures committed: one attempt to remove the old copies of their bytes
        from the database's files (`storage.scrub`), between writes; whether it succeeded."""
        with self._write_turn:
            return self._scrubber.scrub(wait_ms)

    @contextmanager
    def write(self, tenant_id: str) -> Iterator[Transaction]:
        """A write transaction; commits when the block ends without an exception.

        Inside `batch()` (same thread) it is a savepoint of the batch's transaction instead:
        its changes are kept if the block succeeds, undone alone if it fails, and committed
        with the batch."""
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is not None:
            with self._savepoint(batch, tenant_id) as tx:
                yield tx
            return
        with self._write_turn, self._connect() as conn:
            tx = Transaction(
                conn,
                tenant_id,
                self._vectors_queued,
                self.window,
                self._words_removed,
                index_changed=self._index_changed,
            )
            with _undone_on_failure(conn):
                tx.counters = tx.tenant.lock()
                yield tx
                tx.tenant.save(tx.counters)
                conn.commit()
                self._committed()
        for callback in tx._after_commit:
            callback()

    @contextmanager
    def _savepoint(self, batch: _Batch, tenant_id: str) -> Iterator[Transaction]:
        # One savepoint at a time, always of the same name, sent as it is: SQLAlchemy's own
        # (`begin_nested`) names each one anew, so each of its statements is compiled anew.
        conn = batch.conn
        tx = Transaction(
            conn,
            tenant_id,
            self._vectors_queued,
            self.window,
            self._words_removed,
            batch.policies,
            batch.journal,
            self._index_changed,
            batch.outbox,
        )
        try:
            if tenant_id not in batch.counters:
                batch.counters[tenant_id] = tx.tenant.lock()
            conn.exec_driver_sql(_RELEASE_AND_SAVEPOINT if batch.release_pending else _SAVEPOINT)
            batch.release_pending = False
        except db_errors.STORAGE as e:
            db_errors.raise_translated(e)
        tx.counters = batch.counters[tenant_id]
        before = dataclasses.replace(tx.counters)
        try:
            yield tx
            if self._defer_release:  # to the next savepoint, or the commit
                batch.release_pending = True
            else:
                conn.exec_driver_sql(_RELEASE)
            batch.journal.release()
            batch.outbox.release()
        except BaseException as e:
            tx.counters.__dict__.update(before.__dict__)
            batch.policies.pop(tenant_id, None)  # it may have saved one, now undone
            batch.journal.rollback()
            batch.outbox.rollback()
            try:
                conn.exec_driver_sql(_ROLLBACK_TO)
                conn.exec_driver_sql(_RELEASE)
            except db_errors.STORAGE as lost:  # the connection is gone: the whole batch fails
                db_errors.raise_translated(lost)
            if isinstance(e, db_errors.STORAGE):
                db_errors.raise_translated(e)
            raise
        batch.after_commit += tx._after_commit

    @contextmanager
    def derived_write(self) -> Iterator[Connection]:
        """A write transaction of records derived off the write path (the indexer's vectors):
        it takes no tenant's row lock and touches no counters, so on PostgreSQL the writes
        of the tenant never wait for it (storing vectors includes their index's inserts).
        It is ordered against a source's purge by the tenant's vector store turn both take
        (`vectors.store_turn`). SQLite: it takes the write turn like every write."""
        with self._write_turn, self._connect() as conn, _undone_on_failure(conn):
            conn.begin()
            yield conn
            conn.commit()
            self._committed()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: every `write()` of this thread inside the block shares one
        transaction, committed once at the end (or rolled back whole if the commit fails)."""
        with self._write_turn, self._connect() as conn:
            batch = _Batch(conn, event_log.JournalRows(conn), embedding_outbox.pending_rows(conn))
            self._local.batch = batch
            try:
                with _undone_on_failure(conn):
                    conn.begin()
                    yield
                    batch.journal.flush()
                    batch.outbox.flush()
                    for tenant_id, counters in batch.counters.items():
                        repositories.TenantStateRepository(conn, tenant_id).save(counters)
                    conn.commit()
                    self._committed()
            finally:
                self._local.batch = None
        for callback in batch.after_commit:
            callback()

    @contextmanager
    def _connect(self) -> Iterator[Connection]:
        """A writer connection; failing to get one (database down) is UNAVAILABLE."""
        try:
            conn = self._db.writer.connect()
        except db_errors.STORAGE as e:
            db_errors.raise_translated(e)
        with conn:
            yield conn

    @contextmanager
    def read(self, tenant_id: str, *, one_snapshot: bool = True) -> Iterator[Transaction]:
        """A read: all its statements see the database as of one moment (`one_snapshot`), so
        what it reads in several statements agrees (a compaction mark and the events after
        it; a chain's head and its receipts; a source and its derived records). A search
        passes `one_snapshot=False`: on PostgreSQL each of its statements then sees what
        committed before it, without the BEGIN and ROLLBACK round trips (two of a search's
        six); what a prompt cites is checked again when its record is written. SQLite reads
        are always one snapshot (a transaction of its own, begun at the first read)."""
        try:
            with self._reader(one_snapshot) as conn:
                try:
                    yield Transaction(conn, tenant_id, window=self.window)
                finally:
                    db_errors.rollback(conn)
        except db_errors.STORAGE as e:
            db_errors.raise_translated(e)

    def keep_reader(self) -> None:
        """Reads on the calling thread (the event loop's: a read made while no other call is
        in flight runs there) keep one reader connection from one to the next, instead of
        taking one from the pool and giving it back each time; each read is still its own
        transaction. SQLite only: the database is a file of this process, so there is no
        server to lose the connection to (on PostgreSQL the pool checks a connection before
        handing it out). Its gain: docs/benchmarks.md, design measurements. The kept
        connection has a larger page cache (`db.KEPT_READER_CACHE_KIB`)."""
        if self._db.dialect == "sqlite":
            self._kept_on = threading.get_ident()

    @contextmanager
    def _reader(self, one_snapshot: bool = True) -> Iterator[Connection]:
        """The kept connection on its thread, unless a read there is using it already (a
        read inside a read); else one from the pool. A kept connection that SQLAlchemy
        invalidated (its driver connection failed), or left in a transaction, is replaced
        at the next read."""
        if threading.get_ident() != self._kept_on or self._kept_busy:
            with self._db.reader.connect() as conn:
                if self._db.dialect == "postgresql":
                    # Given back to the pool, the connection's own settings are restored.
                    if one_snapshot:
                        conn.execution_options(
                            isolation_level="REPEATABLE READ", postgresql_readonly=True
                        )
                    else:
                        conn.execution_options(isolation_level="AUTOCOMMIT")
                yield conn
            return
        kept = self._kept
        if kept is None or kept.invalidated or kept.in_transaction():
            if kept is not None:
                kept.close()  # a transaction left open (its rollback failed) is undone
            kept = self._kept = self._db.reader.connect()
            set_page_cache(kept.connection.driver_connection, KEPT_READER_CACHE_KIB)
        self._kept_busy = True
        try:
            yield kept
        finally:
            self._kept_busy = False

    def close(self) -> None:
        """Gives the kept reader connection back (the runtime is stopping)."""
        kept, self._kept, self._kept_on = self._kept, None, None
        if kept is not None:
            kept.close()


_SAVEPOINT = "SAVEPOINT batched_write"
_RELEASE = "RELEASE SAVEPOINT batched_write"
_ROLLBACK_TO = "ROLLBACK TO SAVEPOINT batched_write"
_RELEASE_AND_SAVEPOINT = f"{_RELEASE}; {_SAVEPOINT}"  # no parameters: one round trip


@contextmanager
def _undone_on_failure(conn: Connection) -> Iterator[None]:
    """Rolls the connection's transaction back when the block fails; a storage error is
    raised as the error catalog says (`db_errors`)."""
    try:
        yield
    except db_errors.STORAGE as e:
        db_errors.rollback(conn)
        db_errors.raise_translated(e)
    except BaseException:
        db_errors.rollback(conn)
        raise
