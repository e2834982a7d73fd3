"""Repositories over SQLAlchemy Core statements, each scoped to one tenant inside SQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Receipt, link
from runtime_svc.domain.thread_mode import Mode, ThreadMode
from runtime_svc.storage import compiled
from runtime_svc.storage.models import AuditReceiptRow, EventRow, TenantState, ThreadModeRow

_state = cast(Table, TenantState.__table__)
_threads = cast(Table, ThreadModeRow.__table__)
_events = cast(Table, EventRow.__table__)
_receipts = cast(Table, AuditReceiptRow.__table__)


class _Repository:
    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id


class JournalRows:
    """The event and receipt rows of a group commit, written together (one statement per
    table) before it commits, instead of two statements per mutation.

    The rows of the open savepoint are kept apart: a failing mutation's rows are dropped
    with it. Anything that reads or deletes journal rows in the transaction flushes first,
    so it sees every row appended before it; if that happens inside a savepoint that is
    then rolled back, the earlier mutations' rows it wrote are undone with it, and are
    written again later."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._kept: tuple[list[dict[str, Any]], list[dict[str, Any]]] = (
            [],
            [],
        )  # of released savepoints
        self._open: tuple[list[dict[str, Any]], list[dict[str, Any]]] = (
            [],
            [],
        )  # of the open savepoint
        self._exposed: tuple[list[dict[str, Any]], list[dict[str, Any]]] = (
            [],
            [],
        )  # kept, flushed in it

    def add_event(self, row: dict[str, Any]) -> None:
        self._open[0].append(row)

    def add_receipt(self, row: dict[str, Any]) -> None:
        self._open[1].append(row)

    def flush(self) -> None:
        for stmt, kept, opened, exposed in zip(
            (_INSERT_EVENT, _INSERT_RECEIPT), self._kept, self._open, self._exposed, strict=True
        ):
            rows = kept + opened
            if rows:
                compiled.execute_many(self._conn, stmt, rows)
            exposed += kept
            kept.clear()
            opened.clear()

    def release(self) -> None:
        """The open savepoint was released: its rows are the transaction's."""
        for kept, opened, exposed in zip(self._kept, self._open, self._exposed, strict=True):
            kept += opened
            opened.clear()
            exposed.clear()

    def rollback(self) -> None:
        """The open savepoint was rolled back: its rows are dropped; the kept rows flushed
        inside it were undone, so they are pending again."""
        for kept, opened, exposed in zip(self._kept, self._open, self._exposed, strict=True):
            kept += exposed
            opened.clear()
            exposed.clear()


@dataclass
class TenantCounters:
    """The tenant's log positions, read under its row lock and saved before commit."""

    event_sequence: int = 0
    events_compacted_through: int = 0
    receipt_sequence: int = 0
    receipt_head_hash: str = ""
    indexed_docs: int = 0
    # The last stamp given to a change of the search index (see search.held_postings).
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
_INSERT_EVENT = insert(_events)
_INSERT_RECEIPT = insert(_receipts)


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

    def indexed_by_tenant(self) -> list[tuple[str, int]]:
        """Index entries per tenant (a statistic for query planning)."""
        rows = self.conn.execute(select(_state.c.tenant_id, _state.c.indexed_docs))
        return [(r.tenant_id, r.indexed_docs) for r in rows]

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


class EventLog(_Repository):
    def __init__(self, conn: Connection, tenant_id: str, rows: JournalRows | None = None) -> None:
        """`rows`: inside a group commit, where appended rows wait to be written."""
        super().__init__(conn, tenant_id)
        self._rows = rows

    def _flush_pending(self) -> None:
        if self._rows is not None:
            self._rows.flush()

    def append(
        self, state: TenantCounters, event: domain_events.DomainEvent, event_id: str, at_us: int
    ) -> domain_events.LoggedEvent:
        """Appends under the locked tenant row: the next sequence, no gaps."""
        sequence = state.event_sequence + 1
        state.event_sequence = sequence
        row = {
            "tenant_id": self.tenant_id,
            "sequence": sequence,
            "event_id": event_id,
            "kind": event.kind,
            "at_us": at_us,
            "payload": domain_events.to_payload(event),
        }
        if self._rows is not None:
            self._rows.add_event(row)
        else:
            compiled.execute(self.conn, _INSERT_EVENT, row)
        return domain_events.LoggedEvent(sequence, event_id, at_us, event)

    def compact_through(self, state: TenantCounters, sequence: int) -> None:
        if sequence <= state.events_compacted_through:
            return
        self._flush_pending()
        self.conn.execute(
            delete(_events).where(
                _events.c.tenant_id == self.tenant_id, _events.c.sequence <= sequence
            )
        )
        state.events_compacted_through = sequence

    def after(
        self, sequence: int, kinds: Sequence[str], limit: int
    ) -> list[domain_events.LoggedEvent]:
        self._flush_pending()
        stmt = (
            select(
                _events.c.sequence,
                _events.c.event_id,
                _events.c.at_us,
                _events.c.kind,
                _events.c.payload,
            )
            .where(_events.c.tenant_id == self.tenant_id, _events.c.sequence > sequence)
            .order_by(_events.c.sequence)
            .limit(limit)
        )
        if kinds:
            stmt = stmt.where(_events.c.kind.in_(kinds))
        return [
            domain_events.LoggedEvent(
                r.sequence, r.event_id, r.at_us, domain_events.from_payload(r.kind, r.payload)
            )
            for r in self.conn.execute(stmt)
        ]

    def newest_before(self, cutoff_us: int) -> int:
        """The highest sequence of an event older than the cutoff (0 when none)."""
        self._flush_pending()
        return int(
            self.conn.execute(
                select(func.coalesce(func.max(_events.c.sequence), 0)).where(
                    _events.c.tenant_id == self.tenant_id, _events.c.at_us < cutoff_us
                )
            ).scalar_one()
        )


def tenants_with_events_before(conn: Connection, cutoff_us: int) -> list[str]:
    return list(
        conn.execute(
            select(_events.c.tenant_id).where(_events.c.at_us < cutoff_us).distinct()
        ).scalars()
    )


class ReceiptChain(_Repository):
    def __init__(self, conn: Connection, tenant_id: str, rows: JournalRows | None = None) -> None:
        """`rows`: inside a group commit, where appended rows wait to be written."""
        super().__init__(conn, tenant_id)
        self._rows = rows

    def append(self, state: TenantCounters, receipt: Receipt) -> Receipt:
        linked = link(
            Receipt(**{**receipt.__dict__, "sequence": state.receipt_sequence + 1}),
            self.tenant_id,
            state.receipt_head_hash,
        )
        state.receipt_sequence, state.receipt_head_hash = linked.sequence, linked.hash
        row = {"tenant_id": self.tenant_id, **linked.__dict__}
        if self._rows is not None:
            self._rows.add_receipt(row)
        else:
            compiled.execute(self.conn, _INSERT_RECEIPT, row)
        return linked

    def page(
        self, target_id: str, after_sequence: int, limit: int, newest_first: bool = False
    ) -> list[Receipt]:
        """Receipts in chain order after `after_sequence`, or `newest_first` before it (0:
        from the newest)."""
        if self._rows is not None:
            self._rows.flush()
        seq = _receipts.c.sequence
        bound: ColumnElement[bool] | None
        order: ColumnElement[int]
        if newest_first:
            bound, order = (seq < after_sequence) if after_sequence else None, seq.desc()
        else:
            bound, order = seq > after_sequence, seq
        stmt = (
            select(*_receipt_columns())
            .where(_receipts.c.tenant_id == self.tenant_id)
            .order_by(order)
            .limit(limit)
        )
        if bound is not None:
            stmt = stmt.where(bound)
        if target_id:
            stmt = stmt.where(_receipts.c.target_id == target_id)
        return [Receipt(**r._mapping) for r in self.conn.execute(stmt)]

    def all(self, batch: int = 1000) -> Iterator[Receipt]:
        after = 0
        while True:
            rows = self.page("", after, batch)
            yield from rows
            if len(rows) < batch:
                return
            after = rows[-1].sequence


def _receipt_columns() -> list[Column[Any]]:
    return [c for c in _receipts.c if c.name != "tenant_id"]
