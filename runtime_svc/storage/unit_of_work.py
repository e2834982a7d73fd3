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


class Transaction:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.session = session
        self.tenant = repositories.TenantStateRepository(session, tenant_id)
        self.thread_modes = repositories.ThreadModeRepository(session, tenant_id)
        self.events = repositories.EventLog(session, tenant_id)
        self.receipts = repositories.ReceiptChain(session, tenant_id)
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


def _storage_error(e: OperationalError) -> AgentmemError:
    text = str(e.orig).lower() if e.orig else ""
    if "locked" in text or "busy" in text or "serializ" in text or "deadlock" in text:
        return AgentmemError(Reason.CONCURRENT_MODIFICATION, detail=type(e.orig).__name__)
    return AgentmemError(Reason.UNAVAILABLE, detail=type(e.orig).__name__)
