"""The semantic side of retrieval: a tenant's vectors of one model ranked by cosine
similarity, with the tenant check and the full eligibility predicate in the same statement
that takes the top k.

SQLite (sqlite-vec's scalar functions over the `memory_vectors` table): a tenant with at
most `exact_max` indexed sources is searched exactly. A larger one is first narrowed by
1-bit signatures (Hamming distance, read from a covering index) to `coarse` candidates, and
those are ranked exactly with the predicate applied; whenever that leaves fewer than k
eligible results while the tenant has more vectors, the exact search runs instead, so the
coarse pass never drops eligible results below k.

PostgreSQL: pgvector's cosine distance over the stored real[] cast to `vector`, exact
within the tenant (no ANN index: one could drop eligible results below k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import (
    Connection,
    Float,
    LargeBinary,
    bindparam,
    case,
    cast,
    func,
    literal,
    select,
    true,
)

from runtime_svc.domain.embeddings import Vector, signature
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.search_index import Hit, MatchRow
from runtime_svc.storage.sources import sources
from runtime_svc.storage.vectors import encode, memory_vectors

v = memory_vectors


@dataclass(frozen=True)
class Plan:
    model_id: str
    exact: bool  # False: coarse pass by signatures first (SQLite, large tenants)
    coarse: int
    min_similarity: float = -1.0  # nearer than this only


class VectorSearch:
    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn, self.tenant_id = conn, tenant_id
        self._sqlite = conn.dialect.name == "sqlite"

    def _distance(self, query: Vector):  # type: ignore[no-untyped-def]
        if self._sqlite:
            q = bindparam("qvec", encode(self.conn, query), type_=LargeBinary)
            return func.vec_distance_cosine(v.c.embedding, q)
        from pgvector.sqlalchemy import Vector as PgVector

        q = bindparam("qvec", list(query), type_=PgVector(len(query)))
        return cast(v.c.embedding, PgVector()).op("<=>", return_type=Float)(q)

    def _candidates(self, plan: Plan, query: Vector):  # type: ignore[no-untyped-def]
        """The rows of the tenant's vectors to rank: all, or the best by signature."""
        if plan.exact or not self._sqlite:
            return None
        sig = bindparam("qsig", signature(query), type_=LargeBinary)
        hamming = func.vec_distance_hamming(func.vec_bit(v.c.signature), func.vec_bit(sig))
        return (
            select(v.c.source_pk)
            .where(v.c.tenant_id == self.tenant_id, v.c.model_id == plan.model_id)
            .order_by(hamming)
            .limit(plan.coarse)
            .cte("coarse")
            .prefix_with("MATERIALIZED")
        )

    def _ranked(self, plan: Plan, query: Vector, *, exact: bool):  # type: ignore[no-untyped-def]
        distance = self._distance(query).label("distance")
        coarse = None if exact else self._candidates(plan, query)
        base = v.join(sources, sources.c.pk == v.c.source_pk)
        if coarse is not None:
            base = coarse.join(v, v.c.source_pk == coarse.c.source_pk).join(
                sources, sources.c.pk == v.c.source_pk
            )
        return distance, base

    def search(self, plan: Plan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        """The top `limit` eligible sources by cosine similarity (score = similarity)."""
        if plan.exact or not self._sqlite:
            return self._exact(plan, query, limit, now_us)
        hits, dropped = self._coarse(plan, query, limit, now_us)
        if len(hits) < limit and dropped:  # ineligible sources took places among the coarse
            return self._exact(plan, query, limit, now_us)
        return hits

    def _columns(self, distance):  # type: ignore[no-untyped-def]
        return (
            sources.c.pk,
            sources.c.source_id,
            sources.c.revision,
            (1.0 - distance).label("score"),
            sources.c.generated_form,
            sources.c.save_intent,
        )

    def _exact(self, plan: Plan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        distance, base = self._ranked(plan, query, exact=True)
        stmt = (
            select(*self._columns(distance))
            .select_from(base)
            .where(
                v.c.tenant_id == self.tenant_id,
                v.c.model_id == plan.model_id,
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
                distance <= bindparam("max_distance", 1.0 - plan.min_similarity),
            )
            .order_by(distance, sources.c.source_id)
            .limit(limit)
        )
        return [Hit(*r) for r in self.conn.execute(stmt)]

    def _coarse(self, plan: Plan, query: Vector, limit: int, now_us: int) -> tuple[list[Hit], int]:
        """Top `limit` among the coarse candidates, ranked exactly with the eligibility
        predicate in the statement; and how many coarse candidates were not eligible (when
        some were and fewer than `limit` remain, they may have taken eligible ones' places)."""
        distance, base = self._ranked(plan, query, exact=False)
        ok = eligibility_sql.eligible(sources.c, bindparam("now_us", now_us))
        scored = (
            select(*self._columns(distance), distance, case((ok, 1), else_=0).label("ok"))
            .select_from(base)
            .where(
                v.c.tenant_id == self.tenant_id,
                v.c.model_id == plan.model_id,
                sources.c.tenant_id == self.tenant_id,
            )
            .cte("scored")
            .prefix_with("MATERIALIZED")
        )
        dropped = select(func.count()).select_from(scored).where(scored.c.ok == 0)
        top = (
            select(scored)
            .where(
                scored.c.ok == 1,
                scored.c.distance <= bindparam("max_distance", 1.0 - plan.min_similarity),
            )
            .order_by(scored.c.distance, scored.c.source_id)
            .limit(limit)
            .subquery("top")
        )
        one = select(literal(1).label("one")).subquery("one")
        stmt = (
            select(dropped.scalar_subquery().label("dropped"), top)
            .select_from(one.outerjoin(top, true()))
            .order_by(top.c.distance, top.c.source_id)
        )
        rows = self.conn.execute(stmt).all()
        hits = [Hit(*r[1:7]) for r in rows if r.pk is not None]
        return hits, rows[0].dropped if rows else 0

    def matches(self, plan: Plan, query: Vector, now_us: int, cap: int) -> list[MatchRow]:
        """The tenant's nearest vectors whatever their source's state (for explanations):
        up to `cap`, eligible ones first, nearest first."""
        distance, base = self._ranked(plan, query, exact=plan.exact)
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        stmt = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                (1.0 - distance).label("score"),
            )
            .select_from(base)
            .where(
                v.c.tenant_id == self.tenant_id,
                v.c.model_id == plan.model_id,
                sources.c.tenant_id == self.tenant_id,
                distance <= bindparam("max_distance", 1.0 - plan.min_similarity),
            )
            .order_by(state != "eligible", distance, sources.c.source_id)
            .limit(cap)
        )
        return [MatchRow(*r) for r in self.conn.execute(stmt)]

    def similarity(self, model_id: str, query: Vector, pks: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the given sources' vectors (those that have one)."""
        if not pks:
            return {}
        distance = self._distance(query)
        stmt = select(v.c.source_pk, (1.0 - distance)).where(
            v.c.tenant_id == self.tenant_id,
            v.c.model_id == model_id,
            v.c.source_pk.in_(list(pks)),
        )
        return {pk: float(s) for pk, s in self.conn.execute(stmt)}


def unavailable_reason(conn: Connection) -> str:
    """Empty when the database can rank vectors; otherwise why not (for the start-up log)."""
    if conn.dialect.name == "sqlite":
        try:
            conn.execute(select(func.vec_version())).scalar_one()
        except Exception:
            return "the sqlite-vec extension cannot be loaded (pip install 'agentmem[vectors]')"
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
