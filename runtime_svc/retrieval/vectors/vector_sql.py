"""Vectors ranked in SQL: the eligibility predicate and the similarity floor in the statement
that takes the top k. Exact over every vector of the tenant and model (SQLite's sqlite-vec
scalar functions, or pgvector's cosine distance over the stored real[] cast to `vector`), or,
on SQLite, over the first pass's candidates (`seqs`); a large PostgreSQL tenant's through
the HNSW index (`retrieval.vectors.pg_hnsw`). The rows come checked: they are offered to the
eligible-take loop as one round that needs no further check (`Checked`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Connection,
    Float,
    LargeBinary,
    Select,
    Subquery,
    bindparam,
    cast,
    func,
    literal,
    select,
    true,
)
from sqlalchemy.sql import ColumnElement

from runtime_svc.domain import entry_keys
from runtime_svc.retrieval import take
from runtime_svc.retrieval.source_checks import (
    SOURCE_COLUMNS,
    candidate_filter,
    eligible_flag,
    source_row,
)
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.source_rows import sources

v = MemoryVectorRow.__table__
_WIDTH = len(SOURCE_COLUMNS)


def distance(sqlite: bool) -> ColumnElement[float]:
    """Cosine distance of a vector to the query (`qvec`)."""
    if sqlite:
        return func.vec_distance_cosine(v.c.embedding, bindparam("qvec", type_=LargeBinary))
    from pgvector.sqlalchemy import Vector as PgVector

    q = bindparam("qvec", type_=PgVector())
    return cast(v.c.embedding, PgVector()).op("<=>", return_type=Float)(q)


def near(column: ColumnElement[float]) -> ColumnElement[bool]:
    return column <= bindparam("max_distance", type_=Float)


def top(scored: Subquery, grouped: bool) -> Select[Any]:
    """The nearest `limit` of the eligible rows `scored` (grouped: each source's nearest
    passage only), nearest first, ties by source id and passage, with what a hit shows."""
    if grouped:
        ranked = select(
            scored,
            func.row_number()
            .over(partition_by=scored.c.pk, order_by=(scored.c.distance, scored.c.passage))
            .label("rn"),
        ).subquery("ranked")
        picked = select(ranked).where(ranked.c.rn == 1)
        order: tuple[Any, ...] = (ranked.c.distance, ranked.c.source_id, ranked.c.passage)
    else:
        picked = select(scored)
        order = (scored.c.distance, scored.c.source_id, scored.c.passage)
    taken = picked.order_by(*order).limit(bindparam("limit")).subquery("top")
    return (
        select(
            *SOURCE_COLUMNS,
            (1.0 - taken.c.distance).label("score"),
            taken.c.passage,
            taken.c.distance,
        )
        .select_from(taken.join(sources, sources.c.pk == taken.c.pk))
        .order_by(taken.c.distance, taken.c.source_id, taken.c.passage)
    )


@lru_cache(maxsize=8)
def exact_statement(sqlite: bool, grouped: bool) -> Select[Any]:
    """Every vector of the tenant and model, the eligibility predicate and the similarity
    floor in the statement that takes the top k."""
    d = distance(sqlite)
    scored = (
        select(v.c.source_pk.label("pk"), v.c.passage, sources.c.source_id, d.label("distance"))
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(
            v.c.tenant_id == bindparam("tenant_id"),
            v.c.model_id == bindparam("model_id"),
            sources.c.tenant_id == bindparam("tenant_id"),
            eligibility_sql.eligible(sources.c, bindparam("now_us")),
            near(d),
        )
        .subquery("scored")
    )
    return top(scored, grouped)


@lru_cache(maxsize=4)
def coarse_statement(grouped: bool) -> Select[Any]:
    """SQLite: the candidates (`seqs`, a JSON array) ranked exactly, the eligibility
    predicate and the similarity floor in the statement that takes the top k; with how many
    candidates were found (`found`) and how many of them are not eligible (`dropped`)."""
    scored = (
        select(
            v.c.source_pk.label("pk"),
            v.c.passage,
            sources.c.source_id,
            distance(True).label("distance"),
            eligible_flag(),
        )
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(*candidate_filter())
        .cte("scored")
        .prefix_with("MATERIALIZED")
    )
    eligible = select(scored).where(scored.c.ok == 1, near(scored.c.distance)).subquery("eligible")
    hits = top(eligible, grouped).subquery("hits")
    one = select(literal(1).label("one")).subquery("one")
    return (
        select(
            select(func.count()).select_from(scored).scalar_subquery().label("found"),
            select(func.count())
            .select_from(scored)
            .where(scored.c.ok == 0)
            .scalar_subquery()
            .label("dropped"),
            hits,
        )
        .select_from(one.outerjoin(hits, true()))
        .order_by(hits.c.distance, hits.c.source_id, hits.c.passage)
    )


class Ranked:
    """Rows of a ranked statement (`exact_statement`, or `coarse_statement` from its third
    column on), offered as one round already checked."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._checked: dict[int, take.Checked] = {}
        self._scores: list[float] = []
        for i, r in enumerate(rows):
            key = entry_keys.with_passage(r[0], r[_WIDTH + 1])
            self._checked[i] = take.Checked(take.Verdict.ELIGIBLE, source_row(r), key)
            self._scores.append(float(r[_WIDTH]))

    def rounds(self, want: int, refused: set[int]) -> Iterator[take.Round]:
        if self._scores:
            yield take.Round(self._scores, list(range(len(self._scores))))

    def discard(self, refs: set[int]) -> None:
        pass

    def check(self, refs: list[int]) -> Mapping[int, take.Checked]:
        return self._checked


def vector_store_reason(conn: Connection) -> str:
    """Empty when the database can rank vectors; otherwise why not (for the start-up log)."""
    if conn.dialect.name == "sqlite":
        try:
            conn.execute(select(func.vec_version())).scalar_one()
        except Exception:
            return (
                "the sqlite-vec extension cannot be loaded "
                "(pip install 'agentmem-service[vectors]')"
            )
        return ""
    if conn.exec_driver_sql("SELECT 1 FROM pg_extension WHERE extname = 'vector'").first():
        return ""
    available = conn.exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).first()
    if not available:
        return "the PostgreSQL server has no pgvector extension ('vector')"
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception:
        return "the pgvector extension is installed but cannot be created (CREATE EXTENSION vector)"
    return ""
