"""What a prompt block says of its plain-text memories besides their text: when each was said
(`observed_at`), and whether what it says has been superseded (every live fact read from it
was replaced by a later statement: `fact_chains`)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, and_, func, select

from runtime_svc.storage.facts import facts
from runtime_svc.storage.source_rows import sources


@dataclass(frozen=True)
class Said:
    observed_at_us: int
    superseded: bool


def said(conn: Connection, tenant_id: str, source_ids: list[str]) -> dict[str, Said]:
    """Per source id (of those that exist): when it was said, and whether it is superseded."""
    if not source_ids:
        return {}
    live = and_(
        facts.c.tenant_id == tenant_id,
        facts.c.source_id == sources.c.source_id,
        facts.c.retracted_at_us == 0,
    )
    total = select(func.count()).where(live).scalar_subquery()
    replaced = select(func.count()).where(live, facts.c.superseded_by != "").scalar_subquery()
    rows = conn.execute(
        select(sources.c.source_id, sources.c.observed_at_us, total, replaced).where(
            sources.c.tenant_id == tenant_id, sources.c.source_id.in_(source_ids)
        )
    )
    return {r[0]: Said(r[1] or 0, bool(r[2]) and r[2] == r[3]) for r in rows}
