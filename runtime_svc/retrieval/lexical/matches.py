"""Every indexed source matching a query, whatever its state, for an explanation: gathered and
ranked by one pass over the words' postings; the `cap` kept are scored again exactly as
search scores them (the words' stem order), so an explanation shows search's scores and
order. Cost follows the number of matches."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Float, Select, bindparam, case, func, select
from sqlalchemy.sql import ColumnElement

from runtime_svc.domain.eligibility import State
from runtime_svc.retrieval import entry_sql
from runtime_svc.retrieval.hits import MatchRow
from runtime_svc.retrieval.lexical.statistics import QueryStats
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.postings import postings
from runtime_svc.storage.source_rows import sources


def matches(
    conn: Connection, tenant_id: str, stats: QueryStats, now_us: int, cap: int
) -> tuple[list[MatchRow], int]:
    """Up to `cap` of the tenant's indexed sources matching the words (eligible ones first,
    best first, ties by source id), and how many there are."""
    terms = stats.matching  # a word only ineligible entries hold adds 0 to eligible scores
    if not terms:
        return [], 0
    params: dict[str, object] = {"tenant_id": tenant_id, "now_us": now_us, "cap": cap}
    for i, t in enumerate(terms):
        params[f"t{i}"], params[f"w{i}"] = t.stem, t.idf
    params["terms"] = [t.stem for t in terms]
    rows = conn.execute(_statement(len(terms)), params).all()
    found = sorted(
        (
            MatchRow(r.source_id, r.revision, r.classification, r.state, r.score, r.hold_reason)
            for r in rows
        ),
        key=lambda m: (m.state != State.ELIGIBLE.value, -m.score, m.source_id),
    )
    return found, (rows[0].total if rows else 0)


def _score(pk: ColumnElement[int], n_terms: int) -> ColumnElement[float]:
    """The exact score of entry `pk`: its impact for each query word `t<i>` times that
    word's idf `w<i>`, added in the words' stem order, as every ranker adds them."""
    total: ColumnElement[float] | None = None
    for i in range(n_terms):
        q = postings.alias(f"q{i}")
        impact = (
            select(q.c.impact).where(q.c.pk == pk, q.c.term == bindparam(f"t{i}")).scalar_subquery()
        )
        part = func.coalesce(impact, 0.0) * bindparam(f"w{i}", type_=Float)
        total = part if total is None else total + part
    assert total is not None
    return total


@lru_cache(maxsize=64)
def _statement(n_terms: int) -> Select[Any]:
    """All the tenant's postings of the words in one pass: per entry an approximate score and
    whether it is eligible (ignoring time); each source's best entry; the best `cap` of them,
    eligible first, joined to their source rows for their state and scored exactly; `total`
    counts them all. (A source eligible by its postings but whose assent expired since sorts
    among the eligible here; the caller sorts the kept ones again by their state.)"""
    weight = case(
        *[
            (postings.c.term == bindparam(f"t{i}"), bindparam(f"w{i}", type_=Float))
            for i in range(n_terms)
        ],
        else_=0.0,
    )
    gathered = (
        select(
            postings.c.pk,
            func.sum(weight * postings.c.impact).label("approx"),
            func.max(postings.c.eligible).label("eligible"),
        )
        .where(
            postings.c.tenant_id == bindparam("tenant_id"),
            postings.c.term.in_(bindparam("terms", expanding=True)),
        )
        .group_by(postings.c.pk)
        .cte("gathered")
    )
    best = select(
        gathered,
        func.row_number()
        .over(
            partition_by=entry_sql.source_of(gathered.c.pk),
            order_by=(gathered.c.approx.desc(), gathered.c.pk),
        )
        .label("rn"),
    ).subquery("best")  # each source's best passage
    kept = (
        select(best.c.pk, func.count().over().label("total"))
        .where(best.c.rn == 1)
        .order_by(best.c.eligible.desc(), best.c.approx.desc(), best.c.pk)
        .limit(bindparam("cap"))
        .cte("kept")
    )
    state = eligibility_sql.state(sources.c, bindparam("now_us")).label("state")
    return (
        select(
            sources.c.source_id,
            sources.c.revision,
            sources.c.classification,
            state,
            _score(kept.c.pk, n_terms).label("score"),
            sources.c.hold_reason,
            kept.c.total,
        )
        .select_from(kept.join(sources, sources.c.pk == entry_sql.source_of(kept.c.pk)))
        .where(sources.c.tenant_id == bindparam("tenant_id"))
    )
