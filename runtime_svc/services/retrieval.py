"""Use cases: search, prompt assembly and explanation, over one eligibility predicate.

All three read the calling thread's memory mode and analyse the query once (`Query`), which
every step after reads, so an explanation always describes exactly the selection that search
and prompt assembly make. With hybrid retrieval on, each also ranks by meaning
(`runtime_svc.retrieval.Semantic`), fused with the lexical score.
"""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import Future

from agentmem.contract import validation
from runtime_svc import assembly, retrieval
from runtime_svc.assembly import Candidate, Conversation, PromptBlock
from runtime_svc.domain import text, thread_mode
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.passages import date_of_time
from runtime_svc.domain.query import Query
from runtime_svc.domain.sources import Body, Status
from runtime_svc.retrieval import Hit, LexicalSearch, Match, Mirrors, Semantic, Vector
from runtime_svc.services import matched_passages
from runtime_svc.services.clock import Clock
from runtime_svc.services.retrieval_results import Assembled, Explanation, Found, RetrievalStatus
from runtime_svc.storage import embedding_outbox
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.retrieval")

EXPLAIN_CAP = 1000


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
        mirrors: Mirrors | None = None,
        count_tokens: assembly.Count = text.count_tokens,
        tokenizer: str = "words",
    ) -> None:
        """With `semantic`, every use case ranks by hybrid retrieval (words and meaning);
        without, `lexical_only_reason` says why not. `mirrors`: large tenants' postings held
        in memory (None: every search reads the index tables). `count_tokens`: the prompt
        budget's unit (`runtime_svc.adapters.tokenizers`)."""
        self._uow, self._clock = uow, clock
        self._mirrors = mirrors
        self._default_mode = default_mode
        self._budget = posting_budget
        self._semantic = semantic
        self._lexical_only_reason = lexical_only_reason
        self._count, self._tokenizer = count_tokens, tokenizer

    def _lexical(self, tx: Transaction) -> LexicalSearch:
        return LexicalSearch(
            tx.conn,
            tx.sources.tenant_id,
            window=tx.window,
            mirrors=self._mirrors,
            budget=self._budget,
            decoded=tx.decoded,
            shown=tx.shown,
        )

    def _embed(self, query: Query, tenant_id: str) -> Future[Vector] | None:
        """Starts embedding the query (it runs while the lexical side ranks)."""
        if self._semantic is None:
            return None
        return self._semantic.embed(query.text, tenant_id)

    def _eligible(
        self,
        tx: Transaction,
        query: Query,
        limit: int,
        embedding: Future[Vector] | None = None,
        grouped: bool = True,
    ) -> list[Hit]:
        """The top eligible memories for a query (every query word searched; see
        `runtime_svc.retrieval`), each its best passage or (`grouped` off) the top passages,
        fused with the semantic side (which ranks passages too) when hybrid retrieval is on."""
        now = self._clock()
        if self._semantic is None or embedding is None:
            return self._lexical(tx).search(query, limit, now, grouped=grouped)
        wanted = max(limit, self._semantic.candidates)
        lexical = self._lexical(tx).search(query, wanted, now, grouped=grouped)
        ranked = self._semantic.rank(tx, embedding, query, lexical, limit, now, grouped)
        return [r.hit for r in ranked]

    def _thread_disabled(self, tx: Transaction, thread_id: str) -> bool:
        if not thread_id:
            return False
        state = tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default_mode)
        return state.mode is thread_mode.Mode.DISABLED

    def search(
        self,
        caller: Caller,
        query: str,
        thread_id: str,
        limit: int,
        group_by_source: bool = True,
    ) -> list[Found]:
        """The top sources (each with its best passage), or with `group_by_source` off the
        top passages, several of one conversation possibly."""
        _check(query, thread_id, limit)
        asked = Query.of(query)
        embedding = self._embed(asked, caller.tenant_id)
        with self._uow.read(caller.tenant_id, one_snapshot=False) as tx:
            if self._thread_disabled(tx, thread_id):
                return []
            hits = self._eligible(tx, asked, limit, embedding, group_by_source)
        return [
            Found(h.source_id, h.revision, h.score, retrieval.snippet(h.text, asked), h.passage)
            for h in hits
        ]

    def assemble(self, caller: Caller, query: str, thread_id: str, token_budget: int) -> Assembled:
        """Selects and records in effect at once: the prompt record is written only if every
        source it cites is still eligible at the cited revision when it commits; otherwise
        the selection is made again inside the recording transaction."""
        _check(query, thread_id, 1)
        validation.in_range("token_budget", token_budget, 1, validation.MAX_TOKEN_BUDGET)
        asked = Query.of(query)
        embedding = self._embed(asked, caller.tenant_id)
        with self._uow.read(caller.tenant_id, one_snapshot=False) as tx:
            if self._thread_disabled(tx, thread_id):
                return Assembled(PromptBlock("", (), 0), "")
            block = self._render(tx, asked, token_budget, embedding)
        if not block.cited:
            return Assembled(block, "")
        record_id = new_id("prm")
        with self._uow.write(caller.tenant_id) as tx:
            now = self._clock()
            cited = cited_revisions(block)
            if tx.sources.eligible_revisions(list({s for s, _ in cited}), now) != cited:
                if self._thread_disabled(tx, thread_id):
                    return Assembled(PromptBlock("", (), 0), "")
                block = self._render(tx, asked, token_budget, embedding)
                if not block.cited:
                    return Assembled(block, "")
            tx.prompt_records.add(
                record_id,
                thread_id=thread_id,
                created_at_us=now,
                token_budget=token_budget,
                tokens_used=block.tokens,
                query_sha256=hashlib.sha256(query.encode()).hexdigest(),
                cited=list(dict.fromkeys((c.source_id, c.revision) for c in block.cited)),
            )
        return Assembled(block, record_id)

    def _render(
        self, tx: Transaction, query: Query, token_budget: int, embedding: Future[Vector] | None
    ) -> PromptBlock:
        limit = assembly.candidates_for(token_budget)
        hits = self._eligible(tx, query, limit, embedding, grouped=False)
        candidates = assembly.dated(tx, _candidates(hits, tx.window.date))
        return assembly.assemble(candidates, query, token_budget, self._count, tx.window)

    def candidates(
        self, caller: Caller, query: Query, limit: int, grouped: bool = True
    ) -> list[Hit]:
        """The top eligible memories with their text, for answers (no thread context);
        with `grouped` off the top passages, several of one conversation possibly."""
        embedding = self._embed(query, caller.tenant_id)
        with self._uow.read(caller.tenant_id, one_snapshot=False) as tx:
            return self._eligible(tx, query, limit, embedding, grouped)

    def embed_texts(self, texts: list[str]) -> list[Vector] | None:
        """The texts' unit-length vectors by the hybrid model (None: hybrid retrieval off)."""
        return self._semantic.embedder.embed(texts) if self._semantic is not None else None

    def explain(
        self, caller: Caller, query: str, thread_id: str, limit: int, token_budget: int = 0
    ) -> Explanation:
        """The matches of a query with their reasons. With `token_budget`, the selection
        explained is the prompt block's: exactly the sources it cites at that budget."""
        _check(query, thread_id, limit)
        if token_budget:
            validation.in_range("token_budget", token_budget, 1, validation.MAX_TOKEN_BUDGET)
        asked = Query.of(query)
        embedding = self._embed(asked, caller.tenant_id)
        with self._uow.read(caller.tenant_id) as tx:
            explained = self._explain(tx, asked, thread_id, limit, embedding)
            if not token_budget or self._thread_disabled(tx, thread_id):
                return explained
            block = self._render(tx, asked, token_budget, embedding)
        entries = retrieval.as_prompt(explained.entries, {c.source_id for c in block.cited})
        return Explanation(entries, explained.total_matches, explained.truncated)

    def _explain(
        self,
        tx: Transaction,
        query: Query,
        thread_id: str,
        limit: int,
        embedding: Future[Vector] | None,
    ) -> Explanation:
        now = self._clock()
        disabled = self._thread_disabled(tx, thread_id)
        lexical_side = self._lexical(tx)
        if log.isEnabledFor(logging.DEBUG):
            self._log_plan(tx, lexical_side, query, limit, now)
        rows, total = lexical_side.matches(query, now, EXPLAIN_CAP)
        # Sources without an index entry (pending, rejected, revoked) match too; erased
        # ones have no content and never appear.
        unindexed = tx.sources.unindexed_matching(set(query.stems), EXPLAIN_CAP)
        quarantined = [
            Match(
                s.source_id,
                s.revision,
                s.classification.value,
                State(s.state(now)),
                0.0,
                hold_reason=s.hold_reason if s.status is Status.PENDING_REVIEW else "",
            )
            for s in (u.source for u in unindexed)
        ]
        if self._semantic is not None and embedding is not None:
            lexical = lexical_side.search(query, self._semantic.candidates, now)
            hybrid = self._semantic.explain(tx, embedding.result(), query, lexical, rows, now)
            found = total + hybrid.extra + len(quarantined)
            entries = retrieval.explain(
                [*hybrid.matches[:EXPLAIN_CAP], *quarantined],
                limit,
                thread_disabled=disabled,
                ranked=True,
            )
            entries = matched_passages.located(entries, hybrid.hits, query.stems)
            return Explanation(entries, found, truncated=found > len(entries))
        matches = [
            Match(
                r.source_id,
                r.revision,
                r.classification,
                State(r.state),
                r.score,
                hold_reason=r.pending_hold_reason,
            )
            for r in rows
        ] + quarantined
        total += len(quarantined)
        entries = retrieval.explain(matches, limit, thread_disabled=disabled)
        ranked = min(sum(1 for e in entries if e.rank), validation.MAX_LIMIT)
        hits = lexical_side.search(query, ranked, now) if ranked else []
        entries = matched_passages.located(entries, hits, query.stems)
        return Explanation(entries, total, truncated=total > len(entries))

    def _log_plan(
        self, tx: Transaction, lexical: LexicalSearch, query: Query, limit: int, now: int
    ) -> None:
        """The debug line of an explanation: how search runs for this query (the rankers the
        plan chose, by name; no query text)."""
        ran = lexical.rank(query, limit, now).ran
        vector = self._semantic.vector_plan(tx) if self._semantic is not None else None
        said = retrieval.describe_plan(ran.value if ran is not None else "no-match", vector)
        log.debug("retrieval plan", extra={"plan": said, "query_words": len(query.terms)})

    @property
    def hybrid(self) -> bool:
        return self._semantic is not None

    def status(self, caller: Caller) -> RetrievalStatus:
        if self._semantic is None:
            return RetrievalStatus("lexical", self._lexical_only_reason, "", 0, 0, self._tokenizer)
        with self._uow.read(caller.tenant_id) as tx:
            waiting = embedding_outbox.backlog(tx.conn, caller.tenant_id)
        return RetrievalStatus(
            "hybrid",
            "",
            self._semantic.model_id,
            self._semantic.dimension,
            waiting.pending,
            self._tokenizer,
            waiting.lag_s(self._clock()),
            waiting.set_aside,
            waiting.last_error,
            waiting.last_failed_us,
        )


def _candidates(hits: list[Hit], dated: bool) -> list[Candidate]:
    """The prompt's candidates: each passage with its whole conversation (read once per
    source and revision from the stored form the hit carries). A search's statements may
    see different revisions of a session growing meanwhile (on PostgreSQL each sees what
    committed before it), so a passage is read in its own hit's revision: a later one may
    hold messages an earlier one has not (a block citing two revisions is made again where
    it is recorded)."""
    conversations: dict[tuple[str, int], Conversation] = {}
    out = []
    for h in hits:
        conv = None
        if h.passage is not None and h.raw:
            conv = conversations.get((h.source_id, h.revision))
            if conv is None:
                lines, sent_at_us = h.decoded or Body.decoded(h.raw)
                day = date_of_time(sent_at_us) if dated else ""
                conv = conversations[(h.source_id, h.revision)] = Conversation(lines, day)
        shown = h.text if h.passage is None else ""  # a passage: its messages are shown
        out.append(Candidate(h.source_id, h.revision, shown, h.passage, conv))
    return out


def cited_revisions(block: PromptBlock) -> set[tuple[str, int]]:
    """The (source, revision) pairs a block cites (several passages of one count once)."""
    return {(c.source_id, c.revision) for c in block.cited}


def _check(query: str, thread_id: str, limit: int) -> None:
    validation.query(query)
    validation.identifier("thread_id", thread_id, required=False)
    validation.in_range("limit", limit, 1, validation.MAX_LIMIT)
