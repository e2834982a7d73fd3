"""The semantic side of retrieval: a tenant's vectors of one model (one per index entry: a
whole-text memory, or a conversation's passage) ranked by cosine similarity, by the ranker
the plan chose (`retrieval.plan.vector`), every one through the eligible-take loop. Grouped (the
default), each source counts once, by its nearest passage.

The coarse pass over a large tenant only proposes candidates; whenever its proposal
leaves fewer than k eligible results while some candidates were ineligible or gone, the exact
search runs instead, so the coarse pass never drops eligible results below k (a proposal of
every vector the tenant has is the exact search already).

Two floors: an absolute one (`min_similarity`, applied while ranking) and one relative to
the query's best eligible hit (`within_margin`, on the eligible top k): a hit is kept when it
is within `margin` of the best, so a query with a close match does not take in what is
merely above the absolute floor, while a short paraphrase whose best match is itself low
still finds it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, func, select

from runtime_svc.domain.passages import Decoded, Window
from runtime_svc.retrieval import take
from runtime_svc.retrieval.embedders.model import Vector
from runtime_svc.retrieval.hits import Hit, MatchRow, make_hit
from runtime_svc.retrieval.indexer.vector_store import encode
from runtime_svc.retrieval.plan import Vector as Method
from runtime_svc.retrieval.plan import VectorPlan
from runtime_svc.retrieval.source_checks import Vectors
from runtime_svc.retrieval.vectors import pg_hnsw, stored_vectors, vector_sql
from runtime_svc.retrieval.vectors.signatures import Nearest, Signatures
from runtime_svc.retrieval.vectors.stored_vectors import EntryRef, Stored
from runtime_svc.retrieval.vectors.vector_memory import NearestRanker, tenant_vectors
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.shown_sources import ShownSource
from runtime_svc.storage.source_rows import sources

v = vector_sql.v
# A first pass run again for more sources takes this many times the candidates before.
COARSE_WIDER = 8


class VectorSearch:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        window: Window,
        signatures: Signatures,
        decoded: dict[tuple[int, int], Decoded] | None = None,
        shown: dict[int, ShownSource] | None = None,
    ) -> None:
        """`decoded`: conversations decoded in the transaction so far (`hits.make_hit`);
        `shown`: what its checks read of eligible sources, by pk (`source_checks`)."""
        self.conn, self.tenant_id = conn, tenant_id
        self._decoded, self._shown = decoded, shown
        self._sqlite = conn.dialect.name == "sqlite"
        self._window = window
        self._signatures = signatures
        self._last: dict[str, int] = {}  # by model: the largest seq `prepare` saw
        self._all: dict[str, Nearest | None] = {}  # by model: a small tenant's vectors
        self._stored: dict[str, dict[EntryRef, Any]] = {}  # by model: the same, as stored

    def prepare(self, plan: VectorPlan) -> None:
        """What `search` can do before it has the query (done while the query is being
        embedded): a small tenant's vectors read; the coarse pass's signatures brought up to
        the caller's transaction."""
        if plan.method is Method.IN_MEMORY:
            found, self._stored[plan.model_id] = tenant_vectors(
                self.conn, self.tenant_id, plan.model_id
            )
            self._all[plan.model_id] = found
        elif plan.method is Method.COARSE:
            self._last[plan.model_id] = self._signatures.refresh(
                self.conn, self.tenant_id, plan.model_id
            )

    def _params(self, plan: VectorPlan, query: Vector, **more: object) -> dict[str, object]:
        return {
            "tenant_id": self.tenant_id,
            "model_id": plan.model_id,
            "qvec": encode(self.conn, query) if self._sqlite else list(query),
            "max_distance": 1.0 - plan.min_similarity,
            **more,
        }

    def _hits(self, taken: list[take.Taken]) -> list[Hit]:
        decoded = self._decoded if self._decoded is not None else {}
        hits = [make_hit(t.score, t.key, t.row, self._window, decoded) for t in taken]
        return [h for h in hits if h.in_its_row]

    def search(self, plan: VectorPlan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        """The top `limit` eligible sources (with `plan.grouped` off: passages) by cosine
        similarity (score = similarity), within `plan.margin` of the best of them."""
        return within_margin(self._search(plan, query, limit, now_us), plan.margin)

    def _search(self, plan: VectorPlan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        if plan.method is Method.IN_MEMORY:
            if plan.model_id not in self._all:
                self.prepare(plan)
            every = self._all[plan.model_id]
            if every is None:
                return self._exact(plan, query, limit, now_us)
            if not len(every.seqs):
                return []
            return self._in_memory(plan, query, every, limit, now_us).taken_hits
        if plan.method is Method.COARSE:
            coarse = self._coarse(plan, query, limit, now_us)
            if coarse is not None:
                hits, short = coarse
                if len(hits) < limit and short:  # ineligible or gone candidates took places
                    return self._exact(plan, query, limit, now_us)
                return hits
        # PostgreSQL: a large tenant not held (or whose vectors were let go) by its index
        if plan.method is Method.PGVECTOR_HNSW or (plan.method is Method.COARSE and plan.hnsw):
            found = self._hnsw(plan, query, limit, now_us)
            if found is not None:
                return found
        return self._exact(plan, query, limit, now_us)

    def _hnsw(self, plan: VectorPlan, query: Vector, limit: int, now_us: int) -> list[Hit] | None:
        """PostgreSQL: the top `limit` through the HNSW index; None when the index scan gave
        fewer eligible vectors than needed before the similarity floor stopped it (its
        candidates ran out, or its passages fell to fewer sources): the exact search then."""
        scan = pg_hnsw.scan_size(limit)
        pg_hnsw.configure(self.conn, scan)
        stmt = pg_hnsw.statement(len(query), plan.grouped)
        params = self._params(plan, query, now_us=now_us, limit=limit, scan=scan)
        rows = list(self.conn.execute(stmt, params))
        scanned, reach = (rows[0][0], rows[0][1]) if rows else (0, None)
        ranked = vector_sql.Ranked([r[2:] for r in rows if r[2] is not None])
        hits = self._hits(take.take(ranked, ranked, limit, plan.grouped, limit).taken)
        floored = reach is not None and reach > 1.0 - plan.min_similarity
        if len(hits) < limit and not (scanned >= scan and floored):
            return None
        return hits

    def _exact(self, plan: VectorPlan, query: Vector, limit: int, now_us: int) -> list[Hit]:
        stmt = vector_sql.exact_statement(self._sqlite, plan.grouped)
        params = self._params(plan, query, now_us=now_us, limit=limit)
        ranked = vector_sql.Ranked(list(self.conn.execute(stmt, params)))
        return self._hits(take.take(ranked, ranked, limit, plan.grouped, limit).taken)

    def _in_memory(
        self, plan: VectorPlan, query: Vector, near: Nearest, limit: int, now_us: int
    ) -> _Taken:
        """Candidates whose vectors are in memory ranked here; their sources checked."""

        def forget(seqs: Sequence[int]) -> None:
            self._signatures.forget(self.tenant_id, plan.model_id, list(seqs))

        ranker = NearestRanker(near, query, plan.min_similarity, forget)
        checker = Vectors(self.conn, self.tenant_id, plan.model_id, now_us, self._shown)
        result = take.take(ranker, checker, limit, plan.grouped, limit)
        return _Taken(self._hits(result.taken), result.refused)

    def _coarse(
        self, plan: VectorPlan, query: Vector, limit: int, now_us: int
    ) -> tuple[list[Hit], int] | None:
        """Top `limit` among the coarse candidates, ranked exactly with the eligibility
        predicate; and how many candidates were not eligible or are gone (when some were and
        fewer than `limit` remain, they may have taken eligible ones' places). Grouped by
        source, a first pass whose candidates all fell to fewer than `limit` sources (a long
        conversation has a passage per message) is run again with eight times as many,
        until every held vector is a candidate or every one left out is past the similarity
        floor (`Nearest.left_out`: by the int8 codes, with their error). None on PostgreSQL when
        the tenant's vectors are not held (another tenant's took their room): the search
        then runs as if nothing were held."""
        if not self._sqlite and not self._signatures.holds_vectors(self.tenant_id, plan.model_id):
            return None  # no pass by signatures on PostgreSQL: its index, or exact, instead
        n = plan.coarse
        while True:
            found = self._coarse_pass(plan, query, limit, now_us, n)
            if found is None:
                return None
            hits, short, complete = found
            if complete or not plan.grouped or len(hits) >= limit:
                return hits, short
            n *= COARSE_WIDER

    def _coarse_pass(
        self, plan: VectorPlan, query: Vector, limit: int, now_us: int, n: int
    ) -> tuple[list[Hit], int, bool] | None:
        """`_coarse` with `n` candidates; and whether more would find nothing more: they were
        every eligible held vector, or the ones left out are past the similarity floor."""
        near = self._signatures.nearest(
            self.conn, self.tenant_id, plan.model_id, query, n, self._last.get(plan.model_id)
        )
        if not len(near.seqs):
            return [], 0, True
        if near.vectors is not None:
            got = self._in_memory(plan, query, near, limit, now_us)
            # Every vector left out is past the similarity floor: more would find nothing.
            exhausted = near.complete or near.left_out < plan.min_similarity
            return got.taken_hits, 0 if near.complete else got.refused, exhausted
        if not self._sqlite:
            return None
        seqs = near.seqs.tolist()
        params = self._params(plan, query, now_us=now_us, limit=limit, seqs=json.dumps(seqs))
        rows = list(self.conn.execute(vector_sql.coarse_statement(plan.grouped), params))
        ranked = vector_sql.Ranked([r[2:] for r in rows if r[2] is not None])
        hits = self._hits(take.take(ranked, ranked, limit, plan.grouped, limit).taken)
        found, dropped = (rows[0][0], rows[0][1]) if rows else (0, 0)
        gone = len(seqs) - found
        if gone:
            present = set(self.conn.execute(select(v.c.seq).where(v.c.seq.in_(seqs))).scalars())
            missing = [s for s in seqs if s not in present]
            self._signatures.forget(self.tenant_id, plan.model_id, missing)
        return hits, 0 if near.complete else dropped + gone, near.complete

    def matches(self, plan: VectorPlan, query: Vector, now_us: int, cap: int) -> list[MatchRow]:
        """The tenant's nearest sources (by their nearest passage) whatever their state (for
        explanations): up to `cap`, eligible ones first, nearest first."""
        distance = vector_sql.distance(self._sqlite)
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        near = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                (1.0 - distance).label("score"),
                sources.c.hold_reason,
                func.row_number()
                .over(partition_by=sources.c.pk, order_by=(distance, v.c.passage))
                .label("rn"),
            )
            .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
            .where(
                v.c.tenant_id == bindparam("tenant_id"),
                v.c.model_id == bindparam("model_id"),
                sources.c.tenant_id == bindparam("tenant_id"),
                vector_sql.near(distance),
            )
            .subquery("near")
        )
        stmt = (
            select(
                near.c.source_id,
                near.c.revision,
                near.c.classification,
                near.c.state,
                near.c.score,
                near.c.hold_reason,
            )
            .where(near.c.rn == 1)
            .order_by(near.c.state != "eligible", near.c.score.desc(), near.c.source_id)
            .limit(bindparam("cap"))
        )
        params = self._params(plan, query, now_us=now_us, cap=cap)
        return [MatchRow(*r) for r in self.conn.execute(stmt, params)]

    def vectors(self, model_id: str, entries: Sequence[EntryRef]) -> Stored:
        """The stored vectors of the given entries ((source pk, passage) pairs; those that
        have one), for `Stored.similarity` once the query is known."""
        read = self._stored.get(model_id)
        if read is not None:  # every vector of the tenant was read for this search
            return Stored({e: read[e] for e in entries if e in read})
        if model_id in self._last:  # the tenant's held vectors, brought up to date
            held = self._signatures.stored(self.tenant_id, model_id, list(entries))
            if held is not None:
                return Stored(held)
        return stored_vectors.lookup(self.conn, self.tenant_id, model_id, entries)


def within_margin(hits: list[Hit], margin: float) -> list[Hit]:
    """The hits (best first) at least as similar as the best one less `margin`."""
    if not hits:
        return hits
    floor = max(h.score for h in hits) - margin
    return [h for h in hits if h.score >= floor]


@dataclass(frozen=True)
class _Taken:
    taken_hits: list[Hit]
    refused: int  # candidates refused or gone
