"""Use cases: search, prompt assembly and explanation, over one eligibility predicate.

All three read the calling thread's memory mode and pick query terms the same way, so an
explanation always describes exactly the selection that search and prompt assembly make.
"""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

from agentmem.core import validation
from runtime_svc.domain import retrieval, text, thread_mode
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.embeddings import Vector
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.retrieval import Candidate, Entry, Match, PromptBlock
from runtime_svc.services.clock import Clock
from runtime_svc.services.semantic import Semantic
from runtime_svc.storage import vectors
from runtime_svc.storage.search_index import Hit, shard_of
from runtime_svc.storage.unit_of_work import Transaction, UnitOfWork

PROMPT_CANDIDATES = 50
EXPLAIN_CAP = 1000
STATS_TTL_S = 300.0
TOTAL_TTL_S = 10.0


@dataclass(frozen=True)
class Found:
    source_id: str
    revision: int
    score: float
    snippet: str


@dataclass(frozen=True)
class Explanation:
    entries: list[Entry]
    total_matches: int
    truncated: bool


@dataclass(frozen=True)
class RetrievalStatus:
    mode: str  # lexical | hybrid
    lexical_only_reason: str  # disabled | vector_store_unavailable | "" (hybrid)
    model_id: str
    dimension: int
    pending: int  # the caller's sources waiting to be embedded


@dataclass(frozen=True)
class Assembled:
    block: PromptBlock
    prompt_record_id: str


class IndexStatistics:
    """Document frequencies and index shard sizes, cached: they steer which query terms are
    worth searching for and whether scope tokens narrow a search, and drift slowly."""

    def __init__(self, ttl_s: float = STATS_TTL_S) -> None:
        self._ttl = ttl_s
        self._df: dict[tuple[int, str], tuple[int, float]] = {}
        self._shards: tuple[dict[int, int], float] = ({}, 0.0)
        self._lock = threading.Lock()

    def doc_freq(self, tx: Transaction, stems: list[str]) -> dict[str, int]:
        """Rows of the tenant's index shard that hold each stem."""
        now, out = time.monotonic(), {}
        for s in stems:
            key = (tx.index.shard, s)
            cached = self._df.get(key)
            if cached is None or cached[1] < now:
                cached = (tx.index.doc_freq(s), now + self._ttl)
                with self._lock:
                    self._df[key] = cached
            out[s] = cached[0]
        return out

    def shard_docs(self, tx: Transaction) -> int:
        """Rows in the tenant's index shard (all its tenants)."""
        by_shard, expires = self._shards
        if expires < time.monotonic():
            by_shard = {}
            for tenant_id, docs in tx.tenant.indexed_by_tenant():
                shard = shard_of(tenant_id)
                by_shard[shard] = by_shard.get(shard, 0) + docs
            self._shards = (by_shard, time.monotonic() + TOTAL_TTL_S)
        return by_shard.get(tx.index.shard, 0)


class Retrieval:
    def __init__(
        self,
        uow: UnitOfWork,
        clock: Clock,
        *,
        default_mode: thread_mode.Mode,
        posting_budget: int,
        semantic: Semantic | None = None,
        lexical_only_reason: str = "disabled",
    ) -> None:
        """With `semantic`, every use case ranks by hybrid retrieval (words and meaning);
        without, `lexical_only_reason` says why not."""
        self._lexical_only_reason = lexical_only_reason
        self._uow, self._clock = uow, clock
        self._default_mode = default_mode
        self._budget = posting_budget
        self._stats = IndexStatistics()
        self._semantic = semantic

    def _embed(self, query: str) -> Future[Vector] | None:
        """Starts embedding the query (it runs while the lexical side ranks)."""
        return self._semantic.embed(query) if self._semantic is not None else None

    def _plan(self, tx: Transaction, query: str) -> retrieval.Plan:
        terms = text.query_terms(query)
        tenant_docs = tx.tenant.get().indexed_docs
        index_docs = self._stats.shard_docs(tx)
        doc_freq = (
            {}
            if tenant_docs <= self._budget or len(terms) <= 1
            else self._stats.doc_freq(tx, [t.stem for t in terms])
        )
        return retrieval.plan(
            terms,
            doc_freq,
            tenant_docs=tenant_docs,
            index_docs=index_docs,
            posting_budget=self._budget,
        )

    def _eligible(
        self, tx: Transaction, query: str, limit: int, embedding: Future[Vector] | None = None
    ) -> tuple[retrieval.Plan, list[Hit]]:
        """The top eligible memories for a query, and the plan that found them; fused with
        the semantic side when hybrid retrieval is on."""
        p = self._plan(tx, query)
        now = self._clock()
        if self._semantic is None or embedding is None:
            return p, tx.index.search(p.terms, limit, now, scoped=p.scoped)
        lexical = tx.index.search(
            p.terms, max(limit, self._semantic.candidates), now, scoped=p.scoped
        )
        ranked = self._semantic.rank(tx, embedding.result(), p.terms, lexical, limit, now)
        return p, [r.hit for r in ranked]

    def _thread_disabled(self, tx: Transaction, thread_id: str) -> bool:
        if not thread_id:
            return False
        state = tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default_mode)
        return state.mode is thread_mode.Mode.DISABLED

    def search(self, caller: Caller, query: str, thread_id: str, limit: int) -> list[Found]:
        _check(query, thread_id, limit)
        embedding = self._embed(query)
        with self._uow.read(caller.tenant_id) as tx:
            if self._thread_disabled(tx, thread_id):
                return []
            p, hits = self._eligible(tx, query, limit, embedding)
        return [
            Found(h.source_id, h.revision, h.score, retrieval.snippet(h.text, p.terms))
            for h in hits
        ]

    def assemble(self, caller: Caller, query: str, thread_id: str, token_budget: int) -> Assembled:
        _check(query, thread_id, 1)
        validation.in_range("token_budget", token_budget, 1, validation.MAX_TOKEN_BUDGET)
        embedding = self._embed(query)
        with self._uow.read(caller.tenant_id) as tx:
            if self._thread_disabled(tx, thread_id):
                return Assembled(PromptBlock("", (), 0), "")
            hits = self._eligible(tx, query, PROMPT_CANDIDATES, embedding)[1]
        block = retrieval.render_prompt(
            [Candidate(h.source_id, h.revision, h.text) for h in hits], token_budget
        )
        if not block.cited:
            return Assembled(block, "")
        record_id = new_id("prm")
        with self._uow.write(caller.tenant_id) as tx:
            tx.prompt_records.add(
                record_id,
                thread_id=thread_id,
                created_at_us=self._clock(),
                token_budget=token_budget,
                tokens_used=block.tokens,
                query_sha256=hashlib.sha256(query.encode()).hexdigest(),
                cited=[(c.source_id, c.revision) for c in block.cited],
            )
        return Assembled(block, record_id)

    def candidates(self, caller: Caller, query: str, limit: int) -> list[Hit]:
        """The top eligible memories with their text, for answers (no thread context)."""
        embedding = self._embed(query)
        with self._uow.read(caller.tenant_id) as tx:
            return self._eligible(tx, query, limit, embedding)[1]

    def explain(self, caller: Caller, query: str, thread_id: str, limit: int) -> Explanation:
        _check(query, thread_id, limit)
        now = self._clock()
        embedding = self._embed(query)
        with self._uow.read(caller.tenant_id) as tx:
            disabled = self._thread_disabled(tx, thread_id)
            p = self._plan(tx, query)
            rows, total = tx.index.matches(p.terms, now, EXPLAIN_CAP, scoped=p.scoped)
            if self._semantic is not None and embedding is not None:
                lexical = tx.index.search(p.terms, self._semantic.candidates, now, scoped=p.scoped)
                matches, extra = self._semantic.explain(
                    tx, embedding.result(), p.terms, lexical, rows, now
                )
                entries = retrieval.explain(
                    matches[:EXPLAIN_CAP], limit, thread_disabled=disabled, ranked=True
                )
                return Explanation(entries, total + extra, truncated=total + extra > len(entries))
        matches = [
            Match(r.source_id, r.revision, r.classification, State(r.state), r.score) for r in rows
        ]
        entries = retrieval.explain(matches, limit, thread_disabled=disabled)
        return Explanation(entries, total, truncated=total > len(entries))

    @property
    def hybrid(self) -> bool:
        return self._semantic is not None

    def status(self, caller: Caller) -> RetrievalStatus:
        if self._semantic is None:
            return RetrievalStatus("lexical", self._lexical_only_reason, "", 0, 0)
        with self._uow.read(caller.tenant_id) as tx:
            waiting = vectors.pending(tx.conn, caller.tenant_id)
        return RetrievalStatus(
            "hybrid", "", self._semantic.model_id, self._semantic.dimension, waiting
        )


def _check(query: str, thread_id: str, limit: int) -> None:
    validation.query(query)
    validation.identifier("thread_id", thread_id, required=False)
    validation.in_range("limit", limit, 1, validation.MAX_LIMIT)
