"""Per tenant and word, the counts ranking reads (`search_terms`): how many of the tenant's
index entries hold the word (`docs`), how many of its eligible entries do (`eligible_docs`,
the statistics scores are computed from), and a bound of its impacts (`max_impact`, never
lowered). Written only by `storage.postings`, as entries are written, removed, or change
eligibility; the empty word's row counts the tenant's entries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from sqlalchemy import Connection, Executable, Table, case, delete
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.storage import compiled
from runtime_svc.storage.models import SearchTerm

terms_table = cast(Table, SearchTerm.__table__)


@dataclass(frozen=True)
class Count:
    """A change of one word's counts (added), and an impact its bound must reach."""

    term: str
    docs: int
    eligible_docs: int
    max_impact: float


@lru_cache(maxsize=4)
def _upsert(dialect: str) -> Executable:
    """Upsert of a word's counts (added) and impact bound (raised)."""
    stmt = (postgresql if dialect == "postgresql" else sqlite).insert(terms_table)
    current = terms_table.c
    upsert: Executable = stmt.on_conflict_do_update(
        index_elements=[current.tenant_id, current.term],
        set_={
            "docs": current.docs + stmt.excluded.docs,
            "eligible_docs": current.eligible_docs + stmt.excluded.eligible_docs,
            "max_impact": case(
                (stmt.excluded.max_impact > current.max_impact, stmt.excluded.max_impact),
                else_=current.max_impact,
            ),
        },
    )
    return upsert


_KEYS = ("tenant_id", "term", "docs", "eligible_docs", "max_impact")


def add_rows(conn: Connection, tenant_id: str, changes: list[tuple[str, int, int, float]]) -> None:
    """`add` of changes given as (word, docs, eligible docs, impact) in word order."""
    compiled.execute_rows(
        conn, _upsert(conn.dialect.name), _KEYS, [(tenant_id, *c) for c in changes]
    )


def add(conn: Connection, tenant_id: str, changes: Sequence[Count]) -> None:
    """Adds to each word's counts, raising its impact bound if needed."""
    ordered = sorted(changes, key=lambda c: c.term)  # one lock order for every writer
    add_rows(conn, tenant_id, [(c.term, c.docs, c.eligible_docs, c.max_impact) for c in ordered])


def drop_unheld(conn: Connection, tenant_id: str, words: list[str]) -> list[str]:
    """Deletes the rows of those words that no entry of the tenant holds any more; which."""
    return list(
        conn.execute(
            delete(terms_table)
            .where(
                terms_table.c.tenant_id == tenant_id,
                terms_table.c.term.in_(words),
                terms_table.c.docs <= 0,
            )
            .returning(terms_table.c.term)
        ).scalars()
    )
