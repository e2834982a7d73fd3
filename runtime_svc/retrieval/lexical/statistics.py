"""A query's ranking statistics, read from the tenant's word counts (`storage.term_counts`):
every statistic counts the tenant's eligible index entries only, so what a cold, pending,
rejected, revoked or erased source holds moves no eligible source's score or rank."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, bindparam, select

from runtime_svc.domain import lexical
from runtime_svc.domain.lexical import TermStats
from runtime_svc.storage.postings import ENTRY
from runtime_svc.storage.read_rows import driver_rows, one_of
from runtime_svc.storage.term_counts import terms_table


@dataclass(frozen=True)
class QueryStats:
    entries: int  # the tenant's index entries, eligible or not (what ranking costs follow)
    eligible_entries: int
    # The query's words that some eligible entry holds, with their idf and impact bound:
    by_bound: list[TermStats]  # smallest upper bound first (the order they are read in)
    by_stem: list[TermStats]  # the order scores are added up in (`retrieval.scores`)
    # The query's words that any entry holds, by stem: what an explanation matches (a cold
    # source whose words no eligible entry holds is listed too, with its reason).
    matching: list[TermStats]


def _statement(dialect: str) -> Select[Any]:
    """The tenant's counts of some words (read by every search: compiled once)."""
    t = terms_table.c
    return select(t.term, t.docs, t.eligible_docs, t.max_impact).where(
        t.tenant_id == bindparam("tenant_id"), one_of(t.term, "terms", dialect)
    )


def read(conn: Connection, tenant_id: str, stems: Sequence[str]) -> QueryStats:
    """The statistics of the query's words (`Query.stems`)."""
    params = {"tenant_id": tenant_id, "terms": [ENTRY, *sorted(set(stems))]}
    rows = {r[0]: r for r in driver_rows(conn, _statement, params)}
    entry = rows.pop(ENTRY, (ENTRY, 0, 0, 0.0))
    eligible = entry[2]
    matching = [
        TermStats(stem, lexical.idf(eligible, live), max_impact, live)
        for stem, docs, live, max_impact in sorted(rows.values())
        if docs > 0
    ]
    by_stem = [t for t in matching if t.docs > 0]
    return QueryStats(entry[1], eligible, lexical.by_upper_bound(by_stem), by_stem, matching)


def _entries_statement(dialect: str) -> Select[Any]:
    t = terms_table.c
    return select(t.docs).where(t.tenant_id == bindparam("tenant_id"), t.term == ENTRY)


def entry_count(conn: Connection, tenant_id: str) -> int:
    """How many index entries the tenant has, eligible or not (as many as its vectors once
    all are embedded): what the cost of ranking them follows."""
    rows = driver_rows(conn, _entries_statement, {"tenant_id": tenant_id})
    return int(rows[0][0] or 0) if rows else 0
