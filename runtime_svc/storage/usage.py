"""What a tenant stores: memories that still hold their bytes, and those bytes (UTF-8)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, LargeBinary, cast, func, select

from runtime_svc.storage.models import SourceRow

_sources = SourceRow.__table__


@dataclass(frozen=True)
class Usage:
    memories: int
    bytes: int


def stored(conn: Connection, tenant_id: str) -> Usage:
    """Reads the tenant's source rows once (through the tenant index). Erased sources
    (their bytes gone) and foreign pointers without a body count for nothing."""
    if conn.dialect.name == "postgresql":
        size = func.octet_length(_sources.c.raw)
    else:
        size = func.length(cast(_sources.c.raw, LargeBinary))
    row = conn.execute(
        select(func.count(), func.coalesce(func.sum(size), 0)).where(
            _sources.c.tenant_id == tenant_id, _sources.c.raw != ""
        )
    ).one()
    return Usage(int(row[0]), int(row[1]))
