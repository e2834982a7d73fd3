"""The semantic side of retrieval and its fusion with the lexical side (hybrid retrieval).

The query is embedded on a small pool of its own while the lexical side runs; both sides
then rank inside the same read transaction, each with the eligibility predicate in its
ranked statement, and `runtime_svc.retrieval.fusion` merges them. Both rank passages (a
conversation's messages with their context; a plain-text memory is one passage), so fusion
works on (source, passage) keys: a hit carries the passage with the best fused score, and
grouped by source (the default) each source counts once, by that passage. Only vectors of the
configured model are ranked: after a model change, sources not yet re-embedded are ranked
by their words alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from runtime_svc.domain import entry_keys
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.query import Query
from runtime_svc.retrieval import fusion, plan
from runtime_svc.retrieval.embedders.model import Embedder, Vector
from runtime_svc.retrieval.embedders.query_vectors import QueryVectors
from runtime_svc.retrieval.explanation import Match
from runtime_svc.retrieval.hits import Hit, MatchRow
from runtime_svc.retrieval.lexical import statistics
from runtime_svc.retrieval.plan import COARSE_FACTOR, VectorPlan
from runtime_svc.retrieval.vectors import pg_hnsw
from runtime_svc.retrieval.vectors.signatures import Signatures
from runtime_svc.retrieval.vectors.vector_search import VectorSearch
from runtime_svc.storage.repositories import TenantEntries
from runtime_svc.storage.transaction import Transaction


@dataclass(frozen=True)
class HybridSettings:
    weights: fusion.Weights
    candidates: int
    exact_max: int
    min_similarity: float
    held_max_vectors: int
    similarity_margin: float = 2.0  # within this of the best eligible hit (2: any)


Key = tuple[str, int]  # (source id, passage: its index entry key's low bits, 0 for whole)


class Found(NamedTuple):
    """A source found by words, by meaning, or by both (never by neither)."""

    lexical: MatchRow | None
    semantic: MatchRow | None

    @property
    def row(self) -> MatchRow:
        row = self.lexical or self.semantic
        if row is None:
            raise AssertionError("a source found by neither words nor meaning")
        return row


class Explained(NamedTuple):
    matches: list[Match]
    extra: int  # matches the semantic side found that the lexical side did not
    hits: list[Hit]  # the fused candidates, each its best passage


@dataclass(frozen=True)
class Ranked:
    hit: Hit  # score: the fused score
    scored: fusion.Scored[Key]


def _passage(h: Hit) -> int:
    return entry_keys.passage(h.key)


def _key(h: Hit) -> Key:
    return (h.source_id, _passage(h))


def _text(h: Hit) -> Callable[[], str]:
    """A hit's text, rendered when asked for."""
    return lambda: h.text


def _entry(h: Hit, tx: Transaction) -> tuple[object, ...] | None:
    """What names a passage hit's text for good: the tenant's source at its revision, the
    range and how the passage is rendered (None for a plain-text memory: named by its
    text's digest)."""
    if h.passage is None:
        return None
    return (tx.sources.tenant_id, h.source_id, h.revision, h.passage, h.window)


class Semantic:
    def __init__(
        self, embedder: Embedder, settings: HybridSettings, query_cache: int = 1024
    ) -> None:
        """`query_cache`: how many query embeddings are kept for repeated queries."""
        self._embedder = embedder
        self._queries = QueryVectors(query_cache)
        self._s = settings
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="query-embedding")
        # The coarse pass's signatures (and vectors) of large tenants.
        self._signatures = Signatures(max_vectors=settings.held_max_vectors)

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    @property
    def candidates(self) -> int:
        return self._s.candidates

    def embed(self, query: str, tenant_id: str) -> Future[Vector]:
        """Starts embedding the query (a repeated query's vector is taken from the cache,
        the model is not run again); once embedded, the coarse pass over the tenant's
        held signatures is computed ahead too (while the lexical side is still ranking)."""

        def run() -> Vector:
            vector = self._queries.get(self.model_id, query)
            if vector is None:
                vector = self._embedder.embed([query])[0]
                self._queries.put(self.model_id, query, vector)
            self._signatures.propose(
                tenant_id, self.model_id, vector, self._s.candidates * COARSE_FACTOR
            )
            return vector

        return self._pool.submit(run)

    def warm(
        self, connect: Callable[[], Any], tenants: Sequence[TenantEntries], sqlite: bool = True
    ) -> int:
        """Before serving: the coarse pass's signatures and vectors of the largest
        tenants searched by it held (`Signatures.warm`; on PostgreSQL only those whose
        vectors fit, the others going through the HNSW index); how many vectors are held."""
        if not sqlite:
            tenants = [t for t in tenants if t.entries <= self._s.held_max_vectors]
        return self._signatures.warm(connect, tenants, self.model_id, self._s.exact_max)

    def sweep(self, connect: Callable[[], Any]) -> None:
        """The held signatures and vectors brought up to date (`Signatures.sweep`)."""
        self._signatures.sweep(connect)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def vector_plan(self, tx: Transaction, grouped: bool = True) -> VectorPlan:
        """The semantic side's ranker for the tenant (`retrieval.plan.vector`)."""
        # One vector per index entry (a conversation has one per passage).
        sqlite = tx.conn.dialect.name == "sqlite"
        return plan.vector(
            sqlite=sqlite,
            entries=statistics.entry_count(tx.conn, tx.sources.tenant_id),
            dimension=self.dimension,
            exact_max=self._s.exact_max,
            candidates=self._s.candidates,
            model_id=self.model_id,
            min_similarity=self._s.min_similarity,
            grouped=grouped,
            hnsw=not sqlite and self.dimension in pg_hnsw.features(tx.conn).indexed,
            held_max=self._s.held_max_vectors,
            margin=self._s.similarity_margin,
        )

    def _search(self, tx: Transaction) -> VectorSearch:
        return VectorSearch(
            tx.conn, tx.sources.tenant_id, tx.window, self._signatures, tx.decoded, tx.shown
        )

    def rank(
        self,
        tx: Transaction,
        vector: Vector | Future[Vector],
        query: Query,
        lexical: list[Hit],
        limit: int,
        now_us: int,
        grouped: bool = True,
    ) -> list[Ranked]:
        """The top `limit` eligible sources of both sides (each by its best passage), or with
        `grouped` off the top passages, fused (`lexical`: the lexical side's hits for
        `query`, grouped the same way; `vector`: the query's, or its embedding under way)."""
        # What needs no vector first, while the query is still being embedded: the lexical
        # candidates' coverage and vectors, the plan, the coarse pass's signatures.
        coverage = {_key(h): fusion.coverage(query, _text(h), _entry(h, tx)) for h in lexical}
        search = self._search(tx)
        chosen = self.vector_plan(tx, grouped)
        search.prepare(chosen)
        stored = search.vectors(self.model_id, [(h.pk, _passage(h)) for h in lexical])
        if isinstance(vector, Future):
            vector = vector.result()
        semantic = search.search(chosen, vector, self._s.candidates, now_us)
        by_key = {_key(h): h for h in semantic} | {_key(h): h for h in lexical}
        sem = {_key(h): h.score for h in semantic}
        unscored = [h for h in lexical if _key(h) not in sem]
        sims = stored.similarity(vector, [(h.pk, _passage(h)) for h in unscored])
        scored = fusion.fuse(
            {_key(h): h.score for h in lexical},
            sem,
            self._s.weights,
            similarity={
                _key(h): sims[(h.pk, _passage(h))] for h in unscored if (h.pk, _passage(h)) in sims
            },
            coverage=coverage,
        )
        if grouped:
            scored = _best_per_source(scored)
        return [Ranked(replace(by_key[s.key], score=s.score), s) for s in scored[:limit]]

    def explain(
        self,
        tx: Transaction,
        vector: Vector,
        query: Query,
        lexical_hits: list[Hit],
        lexical_rows: list[MatchRow],
        now_us: int,
    ) -> Explained:
        """Every match of either side, for an explanation: the fused candidates first, in the
        order search ranks them, then other eligible matches, then filtered ones; how many
        matches the semantic side added to the lexical side's; the fused candidates' hits."""
        ranked = self.rank(
            tx, vector, query, lexical_hits, len(lexical_hits) + self._s.candidates, now_us
        )
        semantic_rows = self._search(tx).matches(
            self.vector_plan(tx), vector, now_us, self._s.candidates
        )
        best = max((h.score for h in lexical_hits), default=0.0)
        in_ranking = {r.hit.source_id for r in ranked}
        rows: dict[str, Found] = {}
        for r in lexical_rows:
            rows[r.source_id] = Found(r, None)
        for r in semantic_rows:
            found = rows.get(r.source_id)
            rows[r.source_id] = Found(found.lexical if found else None, r)
        state_of = {sid: found.row.state for sid, found in rows.items()}
        matches = [
            _match(r.hit.source_id, r.hit.revision, rows, state_of, r.scored, r.hit.score)
            for r in ranked
        ]
        others = []
        for sid, (lx, sm) in rows.items():
            if sid in in_ranking:
                continue
            lex = fusion.fuse(
                {sid: lx.score} if lx else {},
                {sid: sm.score} if sm else {},
                self._s.weights,
                best=best,
            )[0]
            revision = rows[sid].row.revision
            others.append(_match(sid, revision, rows, state_of, lex, lex.score))
        others.sort(key=lambda m: (-m.score, m.source_id))
        extra = sum(1 for lx, _ in rows.values() if lx is None)
        return Explained(matches + others, extra, [r.hit for r in ranked])


def _best_per_source(scored: list[fusion.Scored[Key]]) -> list[fusion.Scored[Key]]:
    """Each source once, by its passage with the best fused score (`scored` is best first)."""
    seen: set[str] = set()
    out = []
    for s in scored:
        if s.key[0] not in seen:
            seen.add(s.key[0])
            out.append(s)
    return out


def _match(
    source_id: str,
    revision: int,
    rows: dict[str, Found],
    state_of: dict[str, str],
    scored: fusion.Scored[Key] | fusion.Scored[str],
    score: float,
) -> Match:
    found = rows.get(source_id)
    classification = found.row.classification if found else "active"
    return Match(
        source_id,
        revision,
        classification,
        State(state_of.get(source_id, State.ELIGIBLE.value)),
        score,
        hold_reason=found.row.pending_hold_reason if found else "",
        matched_by=scored.matched_by.value,
        lexical_score=scored.lexical,
        semantic_score=scored.semantic,
    )
