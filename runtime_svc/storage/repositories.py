"""Repositories over SQLAlchemy Core statements, each scoped to one tenant inside SQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Receipt, link
from runtime_svc.domain.thread_mode import Mode, ThreadMode
from runtime_svc.storage.models import AuditReceiptRow, EventRow, TenantState, ThreadModeRow

_state = TenantState.__table__
_threads = ThreadModeRow.__table__
_events = EventRow.__table__
_receipts = AuditReceiptRow.__table__


class _Repository:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.session = session
        self.tenant_id = tenant_id


@dataclass
class TenantCounters:
    """The tenant's log positions, read under its row lock and saved before commit."""

    event_sequence: int = 0
    events_compacted_through: int = 0
    receipt_sequence: int = 0
    receipt_head_hash: str = ""
    indexed_docs: int = 0


class TenantStateRepository(_Repository):
    def lock(self) -> TenantCounters:
        """The tenant's counters, created if new, locked until the transaction ends."""
        dialect = self.session.get_bind().dialect.name
        ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(_state)
        self.session.execute(
            ins.values(
                tenant_id=self.tenant_id,
                event_sequence=0,
                events_compacted_through=0,
                receipt_sequence=0,
                receipt_head_hash="",
                indexed_docs=0,
            ).on_conflict_do_nothing(index_elements=["tenant_id"])
        )
        return self._select(for_update=True) or TenantCounters()

    def get(self) -> TenantCounters:
        return self._select(for_update=False) or TenantCounters()

    def _select(self, *, for_update: bool) -> TenantCounters | None:
        stmt = select(
            _state.c.event_sequence,
            _state.c.events_compacted_through,
            _state.c.receipt_sequence,
            _state.c.receipt_head_hash,
            _state.c.indexed_docs,
        ).where(_state.c.tenant_id == self.tenant_id)
        row = self.session.execute(stmt.with_for_update() if for_update else stmt).one_or_none()
        return TenantCounters(**row._mapping) if row else None

    def total_indexed(self) -> int:
        """Index entries of all tenants together (a statistic for query planning)."""
        return self.session.execute(
            select(func.coalesce(func.sum(_state.c.indexed_docs), 0))
        ).scalar_one()

    def save(self, counters: TenantCounters) -> None:
        self.session.execute(
            update(_state).where(_state.c.tenant_id == self.tenant_id).values(**counters.__dict__)
        )


class ThreadModeRepository(_Repository):
    def get(self, thread_id: str) -> ThreadMode | None:
        row = self.session.execute(
            select(_threads.c.mode, _threads.c.revision, _threads.c.effective_at_us).where(
                _threads.c.tenant_id == self.tenant_id, _threads.c.thread_id == thread_id
            )
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
            self.session.execute(
                insert(_threads).values(
                    tenant_id=self.tenant_id, thread_id=state.thread_id, **values
                )
            )
            return
        self.session.execute(
            update(_threads)
            .where(_threads.c.tenant_id == self.tenant_id, _threads.c.thread_id == state.thread_id)
            .values(**values)
        )


class EventLog(_Repository):
    def append(
        self, state: TenantCounters, event: domain_events.DomainEvent, event_id: str, at_us: int
    ) -> domain_events.LoggedEvent:
        """Appends under the locked tenant row: the next sequence, no gaps."""
        sequence = state.event_sequence + 1
        state.event_sequence = sequence
        self.session.execute(
            insert(_events).values(
                tenant_id=self.tenant_id,
                sequence=sequence,
                event_id=event_id,
                kind=event.kind,
                at_us=at_us,
                payload=domain_events.to_payload(event),
            )
        )
        return domain_events.LoggedEvent(sequence, event_id, at_us, event)

    def compact_through(self, state: TenantCounters, sequence: int) -> None:
        if sequence <= state.events_compacted_through:
            return
        self.session.execute(
            delete(_events).where(
                _events.c.tenant_id == self.tenant_id, _events.c.sequence <= sequence
            )
        )
        state.events_compacted_through = sequence

    def after(
        self, sequence: int, kinds: Sequence[str], limit: int
    ) -> list[domain_events.LoggedEvent]:
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
            for r in self.session.execute(stmt)
        ]

    def newest_before(self, cutoff_us: int) -> int:
        """The highest sequence of an event older than the cutoff (0 when none)."""
        return self.session.execute(
            select(func.coalesce(func.max(_events.c.sequence), 0)).where(
                _events.c.tenant_id == self.tenant_id, _events.c.at_us < cutoff_us
            )
        ).scalar_one()


def tenants_with_events_before(session: Session, cutoff_us: int) -> list[str]:
    return list(
        session.execute(
            select(_events.c.tenant_id).where(_events.c.at_us < cutoff_us).distinct()
        ).scalars()
    )


class ReceiptChain(_Repository):
    def append(self, state: TenantCounters, receipt: Receipt) -> Receipt:
        linked = link(
            Receipt(**{**receipt.__dict__, "sequence": state.receipt_sequence + 1}),
            self.tenant_id,
            state.receipt_head_hash,
        )
        state.receipt_sequence, state.receipt_head_hash = linked.sequence, linked.hash
        self.session.execute(insert(_receipts).values(tenant_id=self.tenant_id, **linked.__dict__))
        return linked

    def page(self, target_id: str, after_sequence: int, limit: int) -> list[Receipt]:
        stmt = (
            select(*_receipt_columns())
            .where(_receipts.c.tenant_id == self.tenant_id, _receipts.c.sequence > after_sequence)
            .order_by(_receipts.c.sequence)
            .limit(limit)
        )
        if target_id:
            stmt = stmt.where(_receipts.c.target_id == target_id)
        return [Receipt(**r._mapping) for r in self.session.execute(stmt)]

    def all(self, batch: int = 1000) -> Iterator[Receipt]:
        after = 0
        while True:
            rows = self.page("", after, batch)
            yield from rows
            if len(rows) < batch:
                return
            after = rows[-1].sequence


def _receipt_columns() -> list:
    return [c for c in _receipts.c if c.name != "tenant_id"]
