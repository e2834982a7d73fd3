"""What a prompt block says of its plain-text memories besides their text: when each was said
(`observed_at`), and whether what it says has been superseded (every live fact read from it
was replaced by a later statement: `fact_chains`), so the block puts current ones first and a
model can tell old from new."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, func, select

from runtime_svc.assembly.candidates import Candidate
from runtime_svc.domain.passages import date_of_time
from runtime_svc.storage.facts import facts
from runtime_svc.storage.source_rows import by_source_ids, sources
from runtime_svc.storage.transaction import Transaction


@dataclass(frozen=True)
class Said:
    observed_at_us: int
    superseded: bool


@lru_cache(maxsize=2)
def _statement(dialect: str) -> Select[Any]:
    live = and_(
        facts.c.tenant_id == bindparam("tenant"),
        facts.c.source_id == sources.c.source_id,
        facts.c.retracted_at_us == 0,
    )
    total = select(func.count()).where(live).scalar_subquery().label("facts")
    replaced = (
        select(func.count())
        .where(live, facts.c.superseded_by != "")
        .scalar_subquery()
        .label("replaced")
    )
    return by_source_ids(dialect, (sources.c.source_id, sources.c.observed_at_us, total, replaced))


def said(conn: Connection, tenant_id: str, source_ids: list[str]) -> dict[str, Said]:
    """Per source id (of those that exist): when it was said, and whether it is superseded."""
    if not source_ids:
        return {}
    params = {"tenant": tenant_id, "ids": source_ids}
    rows = conn.execute(_statement(conn.dialect.name), params)
    return {r[0]: Said(r[1] or 0, bool(r[2]) and r[2] == r[3]) for r in rows}


def dated(tx: Transaction, candidates: list[Candidate]) -> list[Candidate]:
    """`candidates`, each plain-text memory with its date (when the deployment dates
    passages: `retrieval.passages.date`) and whether it is superseded."""
    plain = list({c.source_id for c in candidates if c.conversation is None})
    known = said(tx.conn, tx.sources.tenant_id, plain)
    out = []
    for c in candidates:
        s = known.get(c.source_id) if c.conversation is None else None
        if s is not None:
            day = date_of_time(s.observed_at_us) if tx.window.date else ""
            c = replace(c, said=day, superseded=s.superseded)
        out.append(c)
    return out
