"""The tenant's event log and audit receipt chain, and the rows of both that a group commit
writes together."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    Table,
    delete,
    func,
    insert,
    select,
)

from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Receipt, link
from runtime_svc.storage import compiled
from runtime_svc.storage.models import AuditReceiptRow, EventRow
from runtime_svc.storage.repositories import TenantCounters, _Repository

_events = cast(Table, EventRow.__table__)
_receipts = cast(Table, AuditReceiptRow.__table__)
_INSERT_EVENT = insert(_events)
_INSERT_RECEIPT = insert(_receipts)
# Rows to insert, as column → value.
Rows = list[dict[str, Any]]


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
        self._kept: tuple[Rows, Rows] = ([], [])  # of released savepoints
        self._open: tuple[Rows, Rows] = ([], [])  # of the open savepoint
        self._exposed: tuple[Rows, Rows] = ([], [])  # kept, flushed in it

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

    def of_revision(self, target_id: str, revision: int) -> Receipt | None:
        """The receipt of the change that made `revision` of `target_id`."""
        if self._rows is not None:
            self._rows.flush()
        stmt = (
            select(*_receipt_columns())
            .where(
                _receipts.c.tenant_id == self.tenant_id,
                _receipts.c.target_id == target_id,
                _receipts.c.target_revision == revision,
            )
            .order_by(_receipts.c.sequence)
            .limit(1)
        )
        row = self.conn.execute(stmt).first()
        return Receipt(**row._mapping) if row else None

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
