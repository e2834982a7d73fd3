"""Use cases: extract facts from memories as they become active; search them, consolidate
the profile, and answer questions from eligible facts and memories, as they are now or as
they were at a given time (`fact_chains.Period`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from agentmem.contract import scopes, validation
from agentmem.contract.scopes import Scope
from runtime_svc.domain import answers, attributes, passage_answers, passages, questions
from runtime_svc.domain import facts as domain
from runtime_svc.domain.attributes import AttributeKey
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.extraction import RuleExtractor
from runtime_svc.domain.fact_chains import NOW, Period
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.insert_policy import check_intent
from runtime_svc.domain.passage_answers import cosine
from runtime_svc.domain.passages import Part, Range
from runtime_svc.domain.query import Query
from runtime_svc.domain.sources import Body, SaveIntent, Source, SourceKind
from runtime_svc.services.clock import Clock
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.facts")
ASK_FACTS = 10
ASK_PASSAGES = 5


class FactExtraction:
    """Facts are extracted before the write (an extractor may be slow) and stored in the
    transaction that makes the memory active: at insert, or at approval. If the configured
    extractor fails, the rule-based one answers instead and the failure is logged."""

    def __init__(self, extractor: domain.Extractor) -> None:
        self._extractor = extractor
        self._fallback = RuleExtractor()
        # The rules take microseconds; anything else (a model behind HTTP) may block.
        self.blocking = not isinstance(extractor, RuleExtractor)

    def triples(self, body: Body) -> list[domain.Triple]:
        said = domain.user_texts(body)
        try:
            return self._extractor.extract(said)
        except Exception as e:  # never lose a memory over its facts
            log.warning("fact extractor failed; using the rules", extra={"error": type(e).__name__})
            return self._fallback.extract(said)

    def store(
        self, tx: Transaction, source: Source, triples: list[domain.Triple], now_us: int
    ) -> set[AttributeKey]:
        """Stores the facts (outside their chains); the attributes they are about."""
        keys = set()
        for triple in triples:
            level, reason = domain.confidence(source.save_intent.intent, triple)
            key = attributes.key(triple.subject, triple.predicate, triple.object)
            tx.facts.add(
                domain.Fact(
                    new_id("fact"),
                    triple,
                    level,
                    reason,
                    source.save_intent.intent,
                    source.save_intent.source,
                    source.source_id,
                    source.revision,
                    now_us,
                    domain.passage_of(triple, source.body, tx.window),
                    domain.stated_at(triple, source),
                ),
                key.value,
            )
            keys.add(key)
        return keys


@dataclass(frozen=True)
class FactQuery:
    query: str = ""
    save_intent: str = ""
    save_intent_source: str = ""
    state: str = "eligible"
    limit: int = 20
    period: Period = NOW


class Facts:
    def __init__(self, uow: UnitOfWork, clock: Clock, retrieval: Retrieval) -> None:
        self._uow, self._clock, self._retrieval = uow, clock, retrieval

    def search(
        self, caller: Caller, q: FactQuery, analysed: Query | None = None
    ) -> list[domain.Fact]:
        """`analysed`: `q.query` analysed already (`Query.of`), when the caller has it."""
        if q.query:
            validation.query(q.query)
        check_intent(SaveIntent(q.save_intent, q.save_intent_source), prefix="")
        validation.in_range("limit", q.limit, 1, validation.MAX_LIMIT)
        validation.non_negative("as_of", q.period.as_of_us)
        if q.state != "eligible":
            scopes.require(caller.scopes, Scope.CONTENT_READ)
        query = (analysed or Query.of(q.query)) if q.query else None
        terms = list(query.terms) if query is not None else None
        hybrid = query is not None and q.state == "eligible" and self._retrieval.hybrid
        if terms == [] and not hybrid:  # a query of stop words only matches nothing
            return []
        # Hybrid retrieval: also the facts of the memories that retrieval ranks first.
        ranked = (
            self._retrieval.candidates(caller, query, q.limit)
            if hybrid and query is not None
            else []
        )
        with self._uow.read(caller.tenant_id) as tx:
            found = (
                tx.facts.search(
                    terms,
                    state=q.state,
                    save_intent=q.save_intent,
                    save_intent_source=q.save_intent_source,
                    now_us=self._clock(),
                    limit=q.limit,
                    period=q.period,
                )
                if terms != []
                else []
            )
            if not ranked:
                return found
            of_sources = tx.facts.search(
                None,
                state=q.state,
                save_intent=q.save_intent,
                save_intent_source=q.save_intent_source,
                now_us=self._clock(),
                limit=q.limit * 4,
                source_ids=[h.source_id for h in ranked],
                period=q.period,
            )
        source_rank = {h.source_id: i for i, h in enumerate(ranked)}
        of_sources.sort(key=lambda f: source_rank[f.source_id])
        return answers.fuse_rankings(found, of_sources, limit=q.limit)

    def profile(
        self, caller: Caller, save_intent_source: str, as_of_us: int = 0
    ) -> list[answers.ProfileEntry]:
        """The values current now (or at `as_of_us`), one entry per attribute."""
        check_intent(SaveIntent("", save_intent_source), prefix="")
        validation.non_negative("as_of", as_of_us)
        with self._uow.read(caller.tenant_id) as tx:
            found = tx.facts.search(
                None,
                state="eligible",
                save_intent="",
                save_intent_source=save_intent_source,
                now_us=self._clock(),
                limit=1000,
                period=Period(as_of_us),
            )
        return answers.profile(found)

    def ask(
        self, caller: Caller, question: str, token_budget: int, as_of_us: int = 0
    ) -> answers.Answer:
        """From the facts current now (or at `as_of_us`) that answer the question asked
        (`questions`); now, from the sentence of the top passages that answers it
        (`passage_answers`) when no fact does or when that sentence says more of what was
        asked than any fact's statement. What was found but does not answer
        is returned apart, never as the answer. A question as of a past time is answered
        from facts only: memories have no interval. Each piece cites its source's current
        revision (a classification change makes a new one; the fact stays the same)."""
        validation.query(question, "question")
        validation.in_range("token_budget", token_budget, 1, validation.MAX_TOKEN_BUDGET)
        asked = questions.asked(question)
        query = Query.of(question)
        found = self.search(
            caller, FactQuery(query=question, limit=ASK_FACTS, period=Period(as_of_us)), query
        )
        facts = [f for f in found if questions.fact_answers(asked, f)]
        memories: list[answers.Piece] = []
        unused: list[answers.Piece] = []
        if not as_of_us:
            best, memories, unused = self._from_passages(caller, question, query)
            statements = [f.triple.statement for f in facts]
            if best is not None and passage_answers.passage_first(question, best, statements):
                facts = []
            else:
                unused, memories = [*memories, *unused], []
        related = [answers.fact_piece(f) for f in found if f not in facts] + unused
        a = answers.answer(facts, memories, token_budget, related)
        return self._current_revisions(caller, a)

    def _from_passages(
        self, caller: Caller, question: str, query: Query
    ) -> tuple[passage_answers.Scored | None, list[answers.Piece], list[answers.Piece]]:
        """The sentence of the top passages that answers the question (`passage_answers`),
        as scored and as a piece cited by its message and characters; and the passages that
        do not answer."""
        hits = self._retrieval.candidates(caller, query, ASK_PASSAGES, grouped=False)
        said = []
        for i, h in enumerate(hits):
            if h.passage is None:
                said.append(passage_answers.Said(i, -1, True, h.text))
                continue
            messages = Body.from_raw(SourceKind.CONVERSATION, h.raw).messages
            for m in range(h.passage.start, min(h.passage.end + 1, len(messages))):
                by_user = messages[m].role == "user"
                before = messages[m - 1].content if m > 0 else ""
                asked = before if passages.asks(before) else ""
                said.append(passage_answers.Said(i, m, by_user, messages[m].content, asked))
        found = passage_answers.candidates(said)
        similarity = None
        if found and self._retrieval.hybrid:
            vectors = self._retrieval.embed_texts([question, *(s.text for s in found)])
            if vectors is not None:
                similarity = [cosine(vectors[0], v) for v in vectors[1:]]
        best = passage_answers.best(question, found, similarity)
        chosen = best.sentence.said.hit if best is not None else -1
        related = [
            answers.Piece(
                " ".join(h.text.split()), h.source_id, h.revision, h.save_intent, passage=h.passage
            )
            for i, h in enumerate(hits)
            if i != chosen
        ]
        if best is None:
            return None, [], related
        s, h = best.sentence, hits[chosen]
        in_message = s.said.message >= 0
        piece = answers.Piece(
            s.text,
            h.source_id,
            h.revision,
            h.save_intent,
            passage=Range(s.said.message, s.said.message) if in_message else None,
            chars=Part(s.start, s.end) if in_message else None,
        )
        return best, [piece], related

    def _current_revisions(self, caller: Caller, a: answers.Answer) -> answers.Answer:
        ids = sorted({p.source_id for p in (*a.pieces, *a.related)})
        if not ids:
            return a
        with self._uow.read(caller.tenant_id) as tx:
            current = dict(tx.sources.eligible_revisions(ids, self._clock()))

        def now(p: answers.Piece) -> answers.Piece:
            return replace(p, source_revision=current.get(p.source_id, p.source_revision))

        return replace(
            a,
            pieces=tuple(now(p) for p in a.pieces),
            related=tuple(now(p) for p in a.related),
        )
