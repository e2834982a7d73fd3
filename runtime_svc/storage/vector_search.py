"""The semantic side of retrieval: a tenant's vectors of one model (one per search index
entry: a whole-text memory, or a conversation's passage) ranked by cosine similarity, with
the tenant check and the full eligibility predicate in the same statement that takes the
top k. Grouped (the default), each source counts once, by its nearest passage.

SQLite (sqlite-vec's scalar functions over `memory_vectors`): a tenant with at most
`exact_max` index entries (its vectors, once embedded) is searched exactly: while they fit
`IN_MEMORY_MAX`, its vectors are read while the query is being embedded (`prepare`), ranked
in memory once it is, and the nearest ones' sources checked in the database (the tenant
check and the eligibility predicate) from the nearest on until k are eligible beyond doubt,
as for held candidates below; otherwise in the statement that takes the top k. A larger
one is first narrowed to `coarse` candidates by 1-bit signatures (`storage.vector_signatures`,
Hamming distance), and those are ranked exactly with the predicate applied; whenever that
leaves fewer than k eligible results while some candidates were ineligible or gone, the
exact search runs instead, so the coarse pass never drops eligible results below k.

PostgreSQL: pgvector's cosine distance over the stored real[] cast to `vector`, exact
within the tenant (no ANN index: one could drop eligible results below k).
"""

from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Connection,
    Float,
    LargeBinary,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    select,
    true,
    tuple_,
)

from runtime_svc.domain import passages
from runtime_svc.domain.embeddings import Vector, signature
from runtime_svc.domain.passages import Window
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.held_search import HIT_COLUMNS
from runtime_svc.storage.models import SearchTerm
from runtime_svc.storage.read_rows import driver_rows
from runtime_svc.storage.search_index import ENTRY, Hit, MatchRow, make_hit
from runtime_svc.storage.sources import sources
from runtime_svc.storage.vector_signatures import Nearest, Signatures, as_matrix
from runtime_svc.storage.vectors import encode, memory_vectors

v = memory_vectors


# SQLite: a small tenant's vectors are read and ranked in memory for one search while they
# hold at most this many floats (8 MB: 5,000 vectors at 384 dimensions, 680 at 3,072);
# otherwise they are ranked in SQL, which streams them.
IN_MEMORY_MAX = 2_000_000


@dataclass(frozen=True)
class Plan:
    model_id: str
    exact: bool  # False: coarse pass by signatures first (SQLite, large tenants)
    coarse: int
    min_similarity: float = -1.0  # nearer than this only
    grouped: bool = True  # each source once, by its nearest passage
    in_memory: bool = False  # exact, SQLite: the tenant's vectors read and ranked in memory


def entry(pk: int, passage: int) -> int:
    """A vector's search index entry key (`domain.passages.entry_key`)."""
    return (pk << passages.SHIFT) | passage


_terms = SearchTerm.__table__
_ENTRIES = select(_terms.c.docs).where(
    _terms.c.tenant_id == bindparam("tenant_id"), _terms.c.term == ENTRY
)


def entry_count(conn: Connection, tenant_id: str) -> int:
    """How many search index entries the tenant has (the row of the empty word counts them):
    as many as its vectors once all are embedded."""
    rows = driver_rows(conn, _ENTRIES, {"tenant_id": tenant_id})
    return (rows[0][0] or 0) if rows else 0


def _distance(sqlite: bool):  # type: ignore[no-untyped-def]
    """Cosine distance of a vector to the query (`qvec`)."""
    if sqlite:
        return func.vec_distance_cosine(v.c.embedding, bindparam("qvec", type_=LargeBinary))
    from pgvector.sqlalchemy import Vector as PgVector

    q = bindparam("qvec", type_=PgVector())
    return cast(v.c.embedding, PgVector()).op("<=>", return_type=Float)(q)


def _scored(sqlite: bool, *extra):  # type: ignore[no-untyped-def]
    """The tenant's vectors of one model joined to their sources: entry, source id and
    distance (`extra`: more columns)."""
    return (
        select(
            v.c.source_pk.label("pk"),
            v.c.passage,
            sources.c.source_id,
            _distance(sqlite).label("distance"),
            *extra,
        )
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(
            v.c.tenant_id == bindparam("tenant_id"),
            v.c.model_id == bindparam("model_id"),
            sources.c.tenant_id == bindparam("tenant_id"),
        )
    )


def _near(column):  # type: ignore[no-untyped-def]
    return column <= bindparam("max_distance", type_=Float)


def _top(scored, grouped: bool):  # type: ignore[no-untyped-def]
    """The nearest `limit` of the eligible rows `scored` (grouped: each source's nearest
    passage only), nearest first, ties by source id and passage, with what a hit shows."""
    order = (scored.c.distance, scored.c.source_id, scored.c.passage)
    if grouped:
        ranked = select(
            scored,
            func.row_number()
            .over(partition_by=scored.c.pk, order_by=(scored.c.distance, scored.c.passage))
            .label("rn"),
        ).subquery("ranked")
        picked = select(ranked).where(ranked.c.rn == 1)
        order = (ranked.c.distance, ranked.c.source_id, ranked.c.passage)
    else:
        picked = select(scored)
    top = picked.order_by(*order).limit(bindparam("limit")).subquery("top")
    return (
        select(*HIT_COLUMNS, (1.0 - top.c.distance).label("score"), top.c.passage, top.c.distance)
        .select_from(top.join(sources, sources.c.pk == top.c.pk))
        .order_by(top.c.distance, top.c.source_id, top.c.passage)
    )


@lru_cache(maxsize=8)
def _exact_statement(sqlite: bool, grouped: bool):  # type: ignore[no-untyped-def]
    """The exact search: every vector of the tenant and model, the eligibility predicate
    and the similarity floor in the statement that takes the top k."""
    distance = _distance(sqlite)
    scored = (
        _scored(sqlite)
        .where(eligibility_sql.eligible(sources.c, bindparam("now_us")), _near(distance))
        .subquery("scored")
    )
    return _top(scored, grouped)


def _candidates():  # type: ignore[no-untyped-def]
    """SQLite: the vectors given as a JSON array of seqs (`seqs`), the tenant's and the
    model's, joined to their sources, the tenant's."""
    wanted = select(literal_column("value")).select_from(
        func.json_each(bindparam("seqs")).table_valued("value")
    )
    return (
        v.c.seq.in_(wanted.scalar_subquery()),
        # As expressions, so that SQLite reads the candidates by their seq and their
        # sources by pk, instead of walking every source of the tenant (its index).
        func.coalesce(v.c.tenant_id, "") == bindparam("tenant_id"),
        func.coalesce(v.c.model_id, "") == bindparam("model_id"),
        func.coalesce(sources.c.tenant_id, "") == bindparam("tenant_id"),
    )


def _ok():  # type: ignore[no-untyped-def]
    """1 when the source is eligible now (the whole predicate), else 0."""
    return case((eligibility_sql.eligible(sources.c, bindparam("now_us")), 1), else_=0).label("ok")


@lru_cache(maxsize=4)
def _coarse_statement(grouped: bool):  # type: ignore[no-untyped-def]
    """SQLite: the candidates (`seqs`, a JSON array) ranked exactly, the eligibility
    predicate and the similarity floor in the statement that takes the top k; with how many
    candidates were found (`found`) and how many of them are not eligible (`dropped`)."""
    scored = (
        select(
            v.c.source_pk.label("pk"),
            v.c.passage,
            sources.c.source_id,
            _distance(True).label("distance"),
            _ok(),
        )
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(*_candidates())
        .cte("scored")
        .prefix_with("MATERIALIZED")
    )
    eligible = select(scored).where(scored.c.ok == 1, _near(scored.c.distance)).subquery("eligible")
    top = _top(eligible, grouped).subquery("hits")
    one = select(literal(1).label("one")).subquery("one")
    return (
        select(
            select(func.count()).select_from(scored).scalar_subquery().label("found"),
            select(func.count())
            .select_from(scored)
            .where(scored.c.ok == 0)
            .scalar_subquery()
            .label("dropped"),
            top,
        )
        .select_from(one.outerjoin(top, true()))
        .order_by(top.c.distance, top.c.source_id, top.c.passage)
    )


HELD_MARGIN = 8  # candidates checked beyond k in the first batch, for those refused


@lru_cache(maxsize=1)
def _checked_statement():  # type: ignore[no-untyped-def]
    """SQLite: those of the candidates (`_candidates`) that still exist, each with what a
    hit returns of its source and whether that is eligible."""
    return (
        select(v.c.seq, v.c.passage, *HIT_COLUMNS, _ok())
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(*_candidates())
    )


# A row of `_checked_statement` as the driver gives it, its fields named by the statement.
_CHECKED_FIELDS = [c.name for c in _checked_statement().selected_columns]
Checked = namedtuple("Checked", _CHECKED_FIELDS)  # type: ignore[misc]


def _best(candidates: list[tuple[float, Any]], grouped: bool) -> list[tuple[float, Any]]:
    """Eligible candidates, (distance, checked row), in the order the ranked statements
    give: nearest first, ties by source id and passage; grouped, each source once (by its
    nearest passage)."""
    ranked = sorted(candidates, key=lambda c: (c[0], c[1].source_id, c[1].passage))
    if not grouped:
        return ranked
    seen: set[int] = set()
    return [c for c in ranked if not (c[1].pk in seen or seen.add(c[1].pk))]  # type: ignore[func-returns-value]


def _hit_row(r) -> tuple:  # type: ignore[no-untyped-def]
    """What `make_hit` reads of a ranked or checked row (`HIT_COLUMNS`, by name)."""
    return (r.pk, r.source_id, r.revision, r.generated_form, r.save_intent, r.kind, r.raw)


def _cosine(matrix, query: Vector):  # type: ignore[no-untyped-def]
    """Cosine similarity of each row to `query`, in float32 as the database computes it."""
    import numpy as np

    q = np.asarray(query, np.float32)
    norms = np.linalg.norm(matrix, axis=1) * np.float32(np.linalg.norm(q))
    return (matrix @ q) / np.where(norms > 0, norms, np.float32(1))


_TENANT_VECTORS = (
    select(v.c.seq, v.c.embedding, v.c.source_pk, v.c.passage)
    .where(v.c.tenant_id == bindparam("tenant_id"), v.c.model_id == bindparam("model_id"))
    .order_by(v.c.seq)
)


@lru_cache(maxsize=1)
def _stored_statement():  # type: ignore[no-untyped-def]
    """SQLite: the vectors of the entries given as a JSON array of [source pk, passage]
    pairs, each looked up by its key (the tenant check as an expression, so that SQLite does
    not walk the tenant's vectors instead)."""
    wanted = func.json_each(bindparam("entries")).table_valued("value").alias("wanted")
    return (
        select(v.c.source_pk, v.c.passage, v.c.embedding)
        .select_from(wanted)
        .join(
            v,
            and_(
                v.c.source_pk == func.json_extract(wanted.c.value, "$[0]"),
                v.c.passage == func.json_extract(wanted.c.value, "$[1]"),
                v.c.model_id == bindparam("model_id"),
            ),
        )
        .where(func.coalesce(v.c.tenant_id, "") == bindparam("tenant_id"))
    )


class VectorSearch:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        window: Window | None = None,
        signatures: Signatures | None = None,
    ) -> None:
        self.conn, self.tenant_id = conn, tenant_id
        self._sqlite = conn.dialect.name == "sqlite"
        self._window = window or Window()
        self._signatures = signatures or Signatures()
        self._last: dict[str, int] = {}  # by model: the largest seq `prepare` saw
        self._all: dict[str, Nearest | None] = {}  # by model: a small tenant's vectors
        # by model: the same vectors as stored, by entry (source pk, passage)
        self._stored: dict[str, dict[tuple[int, int], object]] = {}

    def prepare(self, plan: Plan) -> None:
        """What `search` can do before it has the query (done while the query is being
        embedded): a small tenant's vectors read; the coarse pass's signatures brought up to
        the caller's transaction."""
        if not self._sqlite:
            return
        if plan.exact:
            if plan.in_memory:
                self._all[plan.model_id] = self._tenant_vectors(plan.model_id)
        else:
            self._last[plan.model_id] = self._signatures.refresh(
                self.conn, self.tenant_id, plan.model_id
            )

    def _tenant_vectors(self, model_id: str) -> Nearest | None:
        """SQLite: every vector of the tenant and model, as candidates (kept by entry too,
        for `vectors`); None when they are not all of one dimension (then they are ranked
        in SQL)."""
        import numpy as np

        rows = driver_rows(
            self.conn, _TENANT_VECTORS, {"tenant_id": self.tenant_id, "model_id": model_id}
        )
        self._stored[model_id] = {(r[2], r[3]): r[1] for r in rows}
        if not rows:
            return Nearest(np.zeros(0, np.int64), None, 0)
        vectors = as_matrix([r[1] for r in rows])
        if vectors is None:
            return None
        seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        return Nearest(seqs, vectors, int(seqs[-1]))

    def _params(self, plan: Plan, query: Vector, **more: object) -> dict[str, object]:
        return {
            "tenant_id": self.tenant_id,
            "model_id": plan.model_id,
            "qvec": encode(self.conn, query) if self._sqlite else list(query),
            "max_distance": 1.0 - plan.min_similarity,
            **more,
        }

    def _hit(self, score: float, r) -> Hit:  # type: ignore[no-untyped-def]
        """The hit of a ranked or checked row (`make_hit`, the lexical side's too)."""
        return make_hit(score, r.passage, _hit_row(r), self._window)

    def _hits(self, rows) -> list[Hit]:  # type: ignore[no-untyped-def]
        """Hits of ranked rows (each with its score)."""
        return [self._hit(r.score, r) for r in rows]

    def search(self, plan: Plan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        """The top `limit` eligible sources (with `plan.grouped` off: passages) by cosine
        similarity (score = similarity)."""
        if not self._sqlite or (plan.exact and not plan.in_memory):
            return self._exact(plan, query, limit, now_us)
        if plan.exact:
            if plan.model_id not in self._all:
                self.prepare(plan)
            every = self._all[plan.model_id]
            if every is None:
                return self._exact(plan, query, limit, now_us)
            if not len(every.seqs):
                return []
            return self._held(plan, query, every, limit, now_us)[0]
        hits, short = self._coarse(plan, query, limit, now_us)
        if len(hits) < limit and short:  # ineligible or gone candidates took places
            return self._exact(plan, query, limit, now_us)
        return hits

    def _exact(self, plan: Plan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        stmt = _exact_statement(self._sqlite, plan.grouped)
        rows = self.conn.execute(stmt, self._params(plan, query, now_us=now_us, limit=limit))
        return self._hits(rows)

    def _coarse(self, plan: Plan, query: Vector, limit: int, now_us: int) -> tuple[list[Hit], int]:
        """Top `limit` among the coarse candidates, ranked exactly with the eligibility
        predicate; and how many candidates were not eligible or are gone (when some were and
        fewer than `limit` remain, they may have taken eligible ones' places)."""
        near = self._signatures.nearest(
            self.conn,
            self.tenant_id,
            plan.model_id,
            signature(query),
            plan.coarse,
            self._last.get(plan.model_id),
        )
        if not len(near.seqs):
            return [], 0
        if near.vectors is not None:
            return self._held(plan, query, near, limit, now_us)
        seqs = near.seqs.tolist()
        params = self._params(plan, query, now_us=now_us, limit=limit, seqs=json.dumps(seqs))
        rows = self.conn.execute(_coarse_statement(plan.grouped), params).all()
        hits = self._hits([r for r in rows if r.pk is not None])
        found, dropped = (rows[0].found, rows[0].dropped) if rows else (0, 0)
        gone = len(seqs) - found
        if gone:
            self._forget_gone(plan, seqs)
        return hits, dropped + gone

    def _held(
        self, plan: Plan, query: Vector, near: Nearest, limit: int, now_us: int
    ) -> tuple[list[Hit], int]:
        """Candidates whose vectors are in memory (the coarse pass's held ones, or every
        vector of a small tenant) ranked exactly here, and their sources checked in the
        database (the tenant check and the eligibility predicate) from the nearest on, in
        growing batches, until `limit` are eligible beyond doubt: every candidate left is
        farther than the last one checked."""
        import numpy as np

        assert near.vectors is not None
        distance = np.float32(1) - _cosine(near.vectors, query)
        order = np.lexsort((near.seqs, distance))
        order = order[distance[order] <= np.float32(1.0 - plan.min_similarity)]
        eligible: list[tuple[float, Any]] = []
        best: list[tuple[float, Any]] = []
        missing: list[int] = []
        refused = 0
        start, size = 0, limit + HELD_MARGIN
        while start < len(order) and len(best) < limit:
            end = min(start + size, len(order))
            while end < len(order) and distance[order[end]] == distance[order[end - 1]]:
                end += 1  # ties are checked together: the database orders them
            seqs = [int(s) for s in near.seqs[order[start:end]]]
            params = {
                "seqs": json.dumps(seqs),
                "tenant_id": self.tenant_id,
                "model_id": plan.model_id,
                "now_us": now_us,
            }
            found = {
                r[0]: Checked._make(r) for r in driver_rows(self.conn, _checked_statement(), params)
            }
            for i, seq in zip(order[start:end].tolist(), seqs, strict=True):
                r = found.get(seq)
                if r is None:
                    missing.append(seq)
                elif not r.ok:
                    refused += 1
                else:
                    eligible.append((float(distance[i]), r))
            best = _best(eligible, plan.grouped)
            start, size = end, size * 2
        if missing:
            self._signatures.forget(self.tenant_id, plan.model_id, missing)
        return [self._hit(1.0 - d, r) for d, r in best[:limit]], refused + len(missing)

    def _forget_gone(self, plan: Plan, seqs: list[int]) -> None:
        present = set(self.conn.execute(select(v.c.seq).where(v.c.seq.in_(seqs))).scalars())
        self._signatures.forget(
            self.tenant_id, plan.model_id, [s for s in seqs if s not in present]
        )

    def matches(self, plan: Plan, query: Vector, now_us: int, cap: int) -> list[MatchRow]:
        """The tenant's nearest sources (by their nearest passage) whatever their state (for
        explanations): up to `cap`, eligible ones first, nearest first."""
        distance = _distance(self._sqlite)
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        near = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                (1.0 - distance).label("score"),
                func.row_number()
                .over(partition_by=sources.c.pk, order_by=(distance, v.c.passage))
                .label("rn"),
            )
            .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
            .where(
                v.c.tenant_id == bindparam("tenant_id"),
                v.c.model_id == bindparam("model_id"),
                sources.c.tenant_id == bindparam("tenant_id"),
                _near(distance),
            )
            .subquery("near")
        )
        stmt = (
            select(
                near.c.source_id, near.c.revision, near.c.classification, near.c.state, near.c.score
            )
            .where(near.c.rn == 1)
            .order_by(near.c.state != "eligible", near.c.score.desc(), near.c.source_id)
            .limit(bindparam("cap"))
        )
        params = self._params(plan, query, now_us=now_us, cap=cap)
        return [MatchRow(*r) for r in self.conn.execute(stmt, params)]

    def vectors(self, model_id: str, entries: Sequence[tuple[int, int]]) -> Stored:
        """The stored vectors of the given entries ((source pk, passage) pairs; those that
        have one), for `Stored.similarity` once the query is known."""
        if not entries:
            return Stored({})
        read = self._stored.get(model_id)
        if read is not None:  # every vector of the tenant was read for this search
            return Stored({e: read[e] for e in entries if e in read})
        if self._sqlite:
            params = {
                "entries": json.dumps(list(entries)),
                "model_id": model_id,
                "tenant_id": self.tenant_id,
            }
            rows = driver_rows(self.conn, _stored_statement(), params)
            return Stored({(pk, p): e for pk, p, e in rows})
        stmt = select(v.c.source_pk, v.c.passage, v.c.embedding).where(
            v.c.source_pk.in_(sorted({pk for pk, _ in entries})),
            tuple_(v.c.source_pk, v.c.passage).in_(list(entries)),
            func.coalesce(v.c.model_id, "") == model_id,
            func.coalesce(v.c.tenant_id, "") == self.tenant_id,
        )
        return Stored({(pk, p): e for pk, p, e in self.conn.execute(stmt)})

    def similarity(
        self, model_id: str, query: Vector, entries: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        """Cosine similarity of the given entries' vectors ((source pk, passage) pairs; those
        that have one)."""
        return self.vectors(model_id, entries).similarity(query)


class Stored:
    """Entries' vectors as stored (float32 bytes on SQLite, a list on PostgreSQL)."""

    def __init__(self, by_entry: dict[tuple[int, int], object]) -> None:
        self._by_entry = by_entry

    def similarity(
        self, query: Vector, entries: Sequence[tuple[int, int]] | None = None
    ) -> dict[tuple[int, int], float]:
        """Cosine similarity to `query` of the given entries (default: all) that have a
        vector, in float32 as the database computes it."""
        import numpy as np

        keys = [k for k in (self._by_entry if entries is None else entries) if k in self._by_entry]
        if not keys:
            return {}
        rows = [self._by_entry[k] for k in keys]
        matrix = (
            np.frombuffer(b"".join(rows), np.float32).reshape(len(rows), -1)  # type: ignore[arg-type]
            if isinstance(rows[0], bytes | bytearray | memoryview)
            else np.asarray(rows, np.float32)
        )
        return {k: float(c) for k, c in zip(keys, _cosine(matrix, query), strict=True)}


def unavailable_reason(conn: Connection) -> str:
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
