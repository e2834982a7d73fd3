"""What a tenant stores: memories that still hold their bytes, and those bytes (UTF-8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, LargeBinary, cast, func, select

from runtime_svc.storage import turn_log
from runtime_svc.storage.models import SourceRow

_sources = SourceRow.__table__


@dataclass(frozen=True)
class Usage:
    memories: int
    bytes: int


def stored(conn: Connection, tenant_id: str) -> Usage:
    """Reads the tenant's source rows once (through the tenant index). Erased sources
    (their bytes gone) and foreign pointers without a body count for nothing."""
    row = conn.execute(
        select(func.count(), func.coalesce(func.sum(_bytes(conn, _sources.c.raw)), 0)).where(
            _sources.c.tenant_id == tenant_id, _sources.c.raw != ""
        )
    ).one()
    turns = turn_log.turns  # a conversation's appended messages
    appended = conn.execute(
        select(func.coalesce(func.sum(_bytes(conn, turns.c.rows)), 0)).where(
            turns.c.tenant_id == tenant_id
        )
    ).scalar()
    return Usage(int(row[0]), int(row[1]) + int(appended or 0))


def _bytes(conn: Connection, column: Any) -> Any:
    if conn.dialect.name == "postgresql":
        return func.octet_length(column)
    return func.length(cast(column, LargeBinary))
