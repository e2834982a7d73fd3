"""Use cases: search, prompt assembly and explanation, over one eligibility predicate.

All three read the calling thread's memory mode and pick query terms the same way, so an
explanation always describes exactly the selection that search and prompt assembly make.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from agentmem.core import validation
from runtime_svc.domain import retrieval, text, thread_mode
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.retrieval import Candidate, Entry, Match, PromptBlock
from runtime_svc.domain.text import Term
from runtime_svc.services.clock import Clock
from runtime_svc.storage.search_index import Hit
from runtime_svc.storage.unit_of_work import Transaction, UnitOfWork

PROMPT_CANDIDATES = 50
EXPLAIN_CAP = 1000


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
class Assembled:
    block: PromptBlock
    prompt_record_id: str


class Retrieval:
    def __init__(
        self, uow: UnitOfWork, clock: Clock, *, default_mode: thread_mode.Mode, posting_budget: int
    ) -> None:
        self._uow, self._clock = uow, clock
        self._default_mode = default_mode
        self._budget = posting_budget

    def _eligible(self, tx: Transaction, query: str, limit: int) -> tuple[list[Term], list[Hit]]:
        """The top eligible memories for a query (every query word searched; see
        `storage.search_index`), and the words searched."""
        terms = text.query_terms(query)
        return terms, tx.index.search(terms, limit, self._clock(), budget=self._budget)

    def _thread_disabled(self, tx: Transaction, thread_id: str) -> bool:
        if not thread_id:
            return False
        state = tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default_mode)
        return state.mode is thread_mode.Mode.DISABLED

    def search(self, caller: Caller, query: str, thread_id: str, limit: int) -> list[Found]:
        _check(query, thread_id, limit)
        with self._uow.read(caller.tenant_id) as tx:
            if self._thread_disabled(tx, thread_id):
                return []
            terms, hits = self._eligible(tx, query, limit)
        return [
            Found(h.source_id, h.revision, h.score, retrieval.snippet(h.text, terms)) for h in hits
        ]

    def assemble(self, caller: Caller, query: str, thread_id: str, token_budget: int) -> Assembled:
        """Selects and records in effect at once: the prompt record is written only if every
        source it cites is still eligible at the cited revision when it commits; otherwise
        the selection is made again inside the recording transaction."""
        _check(query, thread_id, 1)
        validation.in_range("token_budget", token_budget, 1, validation.MAX_TOKEN_BUDGET)
        with self._uow.read(caller.tenant_id) as tx:
            if self._thread_disabled(tx, thread_id):
                return Assembled(PromptBlock("", (), 0), "")
            block = self._render(tx, query, token_budget)
        if not block.cited:
            return Assembled(block, "")
        record_id = new_id("prm")
        with self._uow.write(caller.tenant_id) as tx:
            now = self._clock()
            cited = {(c.source_id, c.revision) for c in block.cited}
            if tx.sources.eligible_revisions([c.source_id for c in block.cited], now) != cited:
                if self._thread_disabled(tx, thread_id):
                    return Assembled(PromptBlock("", (), 0), "")
                block = self._render(tx, query, token_budget)
                if not block.cited:
                    return Assembled(block, "")
            tx.prompt_records.add(
                record_id,
                thread_id=thread_id,
                created_at_us=now,
                token_budget=token_budget,
                tokens_used=block.tokens,
                query_sha256=hashlib.sha256(query.encode()).hexdigest(),
                cited=[(c.source_id, c.revision) for c in block.cited],
            )
        return Assembled(block, record_id)

    def _render(self, tx: Transaction, query: str, token_budget: int) -> PromptBlock:
        hits = self._eligible(tx, query, PROMPT_CANDIDATES)[1]
        return retrieval.render_prompt(
            [Candidate(h.source_id, h.revision, h.text) for h in hits], token_budget
        )

    def candidates(self, caller: Caller, query: str, limit: int) -> list[Hit]:
        """The top eligible memories with their text, for answers (no thread context)."""
        with self._uow.read(caller.tenant_id) as tx:
            return self._eligible(tx, query, limit)[1]

    def lexical(self, caller: Caller, query: str, limit: int) -> list[tuple[str, float]]:
        """(source_id, score) of the top `limit` eligible memories by lexical score alone,
        eligibility and tenant applied inside the ranking (for fusion with other rankers)."""
        with self._uow.read(caller.tenant_id) as tx:
            return [(h.source_id, h.score) for h in self._eligible(tx, query, limit)[1]]

    def explain(self, caller: Caller, query: str, thread_id: str, limit: int) -> Explanation:
        _check(query, thread_id, limit)
        now = self._clock()
        with self._uow.read(caller.tenant_id) as tx:
            disabled = self._thread_disabled(tx, thread_id)
            rows, total = tx.index.matches(text.query_terms(query), now, EXPLAIN_CAP)
            # Sources without an index entry (pending, rejected, revoked) match too; erased
            # ones have no content and never appear.
            stems = {t.stem for t in text.query_terms(query)}
            unindexed = tx.sources.unindexed_matching(stems, EXPLAIN_CAP)
        matches = [
            Match(r.source_id, r.revision, r.classification, State(r.state), r.score) for r in rows
        ] + [
            Match(s.source_id, s.revision, s.classification.value, State(s.state(now)), 0.0)
            for s in (u.source for u in unindexed)
        ]
        total += len(unindexed)
        entries = retrieval.explain(matches, limit, thread_disabled=disabled)
        return Explanation(entries, total, truncated=total > len(entries))


def _check(query: str, thread_id: str, limit: int) -> None:
    validation.query(query)
    validation.identifier("thread_id", thread_id, required=False)
    validation.in_range("limit", limit, 1, validation.MAX_LIMIT)
