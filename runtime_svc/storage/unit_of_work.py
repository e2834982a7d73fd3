"""Unit of work: one transaction, its repositories, rollback unless committed.

`write()` takes the database write lock at BEGIN (SQLite `BEGIN IMMEDIATE`) and the tenant's
row lock (`SELECT ... FOR UPDATE` on PostgreSQL) before anything else, so every
read-check-write sequence inside it is serialized per tenant, and event and receipt
sequences are assigned in commit order. Callbacks registered with `after_commit` run once
it committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from agentmem.core.errors import AgentmemError, Reason
from runtime_svc.storage import repositories
from runtime_svc.storage.db import Database
from runtime_svc.storage.search_index import SearchIndex
from runtime_svc.storage.sources import PromptRecords, SourceRepository


class Transaction:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.session = session
        self.tenant = repositories.TenantStateRepository(session, tenant_id)
        self.thread_modes = repositories.ThreadModeRepository(session, tenant_id)
        self.events = repositories.EventLog(session, tenant_id)
        self.receipts = repositories.ReceiptChain(session, tenant_id)
        self.sources = SourceRepository(session, tenant_id)
        self.index = SearchIndex(session, tenant_id)
        self.prompt_records = PromptRecords(session, tenant_id)
        self.counters = repositories.TenantCounters()
        self._after_commit: list[Callable[[], None]] = []

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._after_commit.append(callback)


class UnitOfWork:
    def __init__(self, db: Database) -> None:
        self._writer = sessionmaker(db.writer, expire_on_commit=False)
        self._reader = sessionmaker(db.reader, expire_on_commit=False)

    @contextmanager
    def write(self, tenant_id: str) -> Iterator[Transaction]:
        """A write transaction; commits when the block ends without an exception."""
        with self._writer() as session:
            tx = Transaction(session, tenant_id)
            try:
                tx.counters = tx.tenant.lock()
                yield tx
                tx.tenant.save(tx.counters)
                session.commit()
            except OperationalError as e:
                session.rollback()
                raise _storage_error(e) from e
            except BaseException:
                session.rollback()
                raise
        for callback in tx._after_commit:
            callback()

    @contextmanager
    def read(self, tenant_id: str) -> Iterator[Transaction]:
        with self._reader() as session:
            try:
                yield Transaction(session, tenant_id)
            except OperationalError as e:
                raise _storage_error(e) from e
            finally:
                session.rollback()


_CONFLICT = ("locked", "busy", "serializ", "deadlock")
_UNREACHABLE = (
    "unable to open",
    "disk i/o",
    "connection",
    "server closed",
    "terminating",
    "could not connect",
    "read-only",
    "no space",
)


def _storage_error(e: OperationalError) -> Exception:
    """Lock conflicts → CONCURRENT_MODIFICATION; an unreachable database → UNAVAILABLE;
    anything else is a defect and surfaces as INTERNAL. The driver's message (which holds
    no bound values) goes to the log only."""
    message = str(e.orig) if e.orig is not None else type(e).__name__
    lowered = message.lower()
    if any(word in lowered for word in _CONFLICT):
        return AgentmemError(Reason.CONCURRENT_MODIFICATION, detail=message[:200])
    if any(word in lowered for word in _UNREACHABLE):
        return AgentmemError(Reason.UNAVAILABLE, detail=message[:200])
    return AgentmemError(Reason.INTERNAL, detail=message[:200])
