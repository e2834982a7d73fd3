"""Listings of sources, newest first, a page at a time (keyset pagination)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Row,
    Select,
    and_,
    or_,
    select,
)

from runtime_svc.domain.sources import Status
from runtime_svc.storage import eligibility_sql, turn_log
from runtime_svc.storage.repositories import _Repository
from runtime_svc.storage.source_rows import Stored, now_param, sources, stored_from


@dataclass(frozen=True)
class SourceFilter:
    classification: str = ""
    status: str = ""
    effective_state: str = ""
    kind: str = ""
    thread_id: str = ""


@dataclass(frozen=True)
class Summary:
    source_id: str
    revision: int
    kind: str
    classification: str
    status: str
    state: str
    created_at_us: int


@dataclass(frozen=True)
class Position:
    """Where a newest-first listing stopped: the last source's creation time and id (the
    tie-breaker). Its text form is what a page token carries."""

    created_at_us: int
    source_id: str

    def text(self) -> str:
        return f"{self.created_at_us}.{self.source_id}"

    @staticmethod
    def parse(text: str) -> Position | None:
        """None for the first page ("") and for text that is not a position."""
        created, _, source_id = text.partition(".")
        if not (created.isdigit() and source_id):
            return None
        return Position(int(created), source_id)


def _newest_first(stmt: Select[Any], after: Position | None) -> Select[Any]:
    """Newest first, ties by source id, after `after` (keyset pagination)."""
    c = sources.c
    if after is not None:
        stmt = stmt.where(
            or_(
                c.created_at_us < after.created_at_us,
                and_(c.created_at_us == after.created_at_us, c.source_id < after.source_id),
            )
        )
    return stmt.order_by(c.created_at_us.desc(), c.source_id.desc())


class SourcePages(_Repository):
    def page_memories(
        self, statuses: tuple[str, ...], after: Position | None, limit: int
    ) -> list[Stored]:
        """Memories of these review statuses, newest first."""
        stmt = select(sources).where(
            sources.c.tenant_id == self.tenant_id, sources.c.status.in_(statuses)
        )
        return self._whole(self.conn.execute(_newest_first(stmt, after).limit(limit)).all())

    def _whole(self, rows: Sequence[Row[Any]]) -> list[Stored]:
        """The sources of rows, each conversation whole (its appended messages read from
        its turn rows)."""
        appended = turn_log.parts(self.conn, [r.pk for r in rows if r.turn_rows])
        return [stored_from(r, turn_log.join(r.raw, appended.get(r.pk, ()))) for r in rows]

    def page(
        self, f: SourceFilter, after: Position | None, limit: int, now_us: int
    ) -> list[Summary]:
        """Sources matching the filter, newest first (metadata and effective state)."""
        state = eligibility_sql.state(sources.c, now_param(now_us))
        stmt = select(
            sources.c.source_id,
            sources.c.revision,
            sources.c.kind,
            sources.c.classification,
            sources.c.status,
            state.label("state"),
            sources.c.created_at_us,
        ).where(sources.c.tenant_id == self.tenant_id)
        stmt = _newest_first(stmt, after).limit(limit)
        for column, value in (
            ("classification", f.classification),
            ("status", f.status),
            ("kind", f.kind),
            ("thread_id", f.thread_id),
        ):
            if value:
                stmt = stmt.where(sources.c[column] == value)
        if f.effective_state:
            stmt = stmt.where(state == f.effective_state)
        if not (f.status or f.effective_state):
            # Default reads leave out pending, rejected and erased sources.
            stmt = stmt.where(sources.c.status == Status.ACTIVE.value)
        return [
            Summary(
                source_id=r.source_id,
                revision=r.revision,
                kind=r.kind,
                classification=r.classification,
                status=r.status,
                state=r.state,
                created_at_us=r.created_at_us,
            )
            for r in self.conn.execute(stmt)
        ]
