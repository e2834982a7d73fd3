"""Repositories over SQLAlchemy Core statements, each scoped to one tenant inside SQL: the
tenant's counters and thread modes here; the event log and receipt chain: `event_log`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, cast

from sqlalchemy import (
    Connection,
    Table,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.domain.thread_mode import Mode, ThreadMode
from runtime_svc.storage import compiled
from runtime_svc.storage.models import TenantState, ThreadModeRow

_state = cast(Table, TenantState.__table__)
_threads = cast(Table, ThreadModeRow.__table__)


class _Repository:
    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id


class TenantEntries(NamedTuple):
    """How many index entries a tenant has (what decides which tenants are held warm)."""

    tenant_id: str
    entries: int


@dataclass
class TenantCounters:
    """The tenant's log positions, read under its row lock and saved before commit."""

    event_sequence: int = 0
    events_compacted_through: int = 0
    receipt_sequence: int = 0
    receipt_head_hash: str = ""
    indexed_docs: int = 0
    # The last stamp given to a change of the search index (see retrieval.held.held_postings).
    index_stamp: int = 0
    # The stamp of the last change that removed a word from the index (a word no entry
    # holds any more): postings held in memory then forget the words the index lost.
    words_removed_at: int = 0

    def next_index_stamp(self) -> int:
        self.index_stamp += 1
        return self.index_stamp

    def words_removed(self) -> None:
        self.words_removed_at = self.next_index_stamp()


_STATE_COLUMNS = (
    _state.c.event_sequence,
    _state.c.events_compacted_through,
    _state.c.receipt_sequence,
    _state.c.receipt_head_hash,
    _state.c.indexed_docs,
    _state.c.index_stamp,
    _state.c.words_removed_at,
)
# Hot-path statements are built once, with bound parameters, so SQLAlchemy compiles them once.
_SELECT_STATE = select(*_STATE_COLUMNS).where(_state.c.tenant_id == bindparam("tenant"))
_LOCK_STATE = _SELECT_STATE.with_for_update()
_SAVE_STATE = update(_state).where(_state.c.tenant_id == bindparam("_tenant"))
_SELECT_THREAD = select(_threads.c.mode, _threads.c.revision, _threads.c.effective_at_us).where(
    _threads.c.tenant_id == bindparam("tenant"), _threads.c.thread_id == bindparam("thread")
)
_INSERT_THREAD = insert(_threads)
_UPDATE_THREAD = update(_threads).where(
    _threads.c.tenant_id == bindparam("_tenant"), _threads.c.thread_id == bindparam("_thread")
)


class TenantStateRepository(_Repository):
    def lock(self) -> TenantCounters:
        """The tenant's counters, created if new, locked until the transaction ends."""
        params = {"tenant": self.tenant_id}
        row = self.conn.execute(_LOCK_STATE, params).one_or_none()
        if row is None:
            dialect = self.conn.dialect.name
            ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(_state)
            self.conn.execute(
                ins.on_conflict_do_nothing(index_elements=["tenant_id"]),
                {"tenant_id": self.tenant_id, **TenantCounters().__dict__},
            )
            row = self.conn.execute(_LOCK_STATE, params).one()
        return TenantCounters(**row._mapping)

    def get(self) -> TenantCounters:
        row = self.conn.execute(_SELECT_STATE, {"tenant": self.tenant_id}).one_or_none()
        return TenantCounters(**row._mapping) if row else TenantCounters()

    def indexed_by_tenant(self) -> list[TenantEntries]:
        """Index entries per tenant (a statistic for query planning)."""
        rows = self.conn.execute(select(_state.c.tenant_id, _state.c.indexed_docs))
        return [TenantEntries(r.tenant_id, r.indexed_docs) for r in rows]

    def save(self, counters: TenantCounters) -> None:
        self.conn.execute(_SAVE_STATE, {"_tenant": self.tenant_id, **counters.__dict__})


class ThreadModeRepository(_Repository):
    def get(self, thread_id: str) -> ThreadMode | None:
        row = compiled.execute(
            self.conn, _SELECT_THREAD, {"tenant": self.tenant_id, "thread": thread_id}
        ).one_or_none()
        if row is None:
            return None
        return ThreadMode(thread_id, Mode(row.mode), row.revision, row.effective_at_us)

    def save(self, state: ThreadMode) -> None:
        values = {
            "mode": state.mode.value,
            "revision": state.revision,
            "effective_at_us": state.effective_at_us,
        }
        if state.revision == 1:
            self.conn.execute(
                _INSERT_THREAD,
                {"tenant_id": self.tenant_id, "thread_id": state.thread_id, **values},
            )
            return
        self.conn.execute(
            _UPDATE_THREAD, {"_tenant": self.tenant_id, "_thread": state.thread_id, **values}
        )
