"""The search index: postings kept in ordinary tables (the same on SQLite and PostgreSQL),
per-tenant statistics, and a top k that reads only the postings that can still matter.

`search_postings` holds one row per content word of an indexed source (its impact, see
`runtime_svc.domain.lexical`) plus one row with the empty word that marks the entry itself,
and whether the source is eligible (ignoring time-dependent rules). `search_terms` holds, per
tenant and word, in how many of the tenant's entries it occurs and the largest impact it had
(the empty word's row counts the tenant's entries). Scores are computed from the tenant's own
rows only.

Top k is MaxScore over those tables: the query words are ordered by their score bound; only
the postings of the "essential" words (those a memory must hold to beat the k-th score) are
read, best impact first and at most `budget` per word, and every memory reached is scored
exactly over all query words in the same statement that joins its source row and applies the
tenant check and the whole eligibility predicate, before ORDER BY and LIMIT. The k-th score
then certifies the result (`lexical.certify`); when it does not, the next word becomes
essential. Only a word in more than `budget` of the tenant's eligible memories can stop the
search short of certainty, and then what it may miss is bounded (`Certificate.bound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, case, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.domain import lexical
from runtime_svc.domain.lexical import Certificate, ListRead, TermStats
from runtime_svc.domain.text import Term
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.models import SearchPosting, SearchTerm
from runtime_svc.storage.sources import sources

postings = SearchPosting.__table__
terms_table = SearchTerm.__table__
ENTRY = ""  # the word of the row that marks an entry (and counts a tenant's entries)
DEFAULT_BUDGET = 20_000


@dataclass(frozen=True)
class Hit:
    pk: int
    source_id: str
    revision: int
    score: float  # higher is better
    text: str  # the generated form
    save_intent: str


@dataclass(frozen=True)
class MatchRow:
    source_id: str
    revision: int
    classification: str
    state: str
    score: float


class SearchIndex:
    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self._insert = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert

    # -- writes: the entry of one source -------------------------------------------------

    def put(self, pk: int, body: str, *, eligible: bool) -> None:
        self.put_many([(pk, body, eligible)])

    def put_many(self, rows: list[tuple[int, str, bool]]) -> None:
        """Entries for (pk, generated form, eligible) per source."""
        if not rows:
            return
        values, docs, best = [], {}, {}
        for pk, body, eligible in rows:
            entry = lexical.analyse(body)
            words = {ENTRY: float(entry.length), **entry.impacts}
            for term, weight in words.items():
                values.append(
                    {
                        "pk": pk,
                        "term": term,
                        "tenant_id": self.tenant_id,
                        "eligible": int(eligible),
                        "impact": weight,
                    }
                )
                docs[term] = docs.get(term, 0) + 1
                best[term] = max(best.get(term, 0.0), weight)
        self.conn.execute(postings.insert(), values)
        self._count([(t, n, best[t]) for t, n in docs.items()])

    def _count(self, changes: list[tuple[str, int, float]]) -> None:
        """Adds to each word's entry count, raising its impact bound if needed."""
        stmt = self._insert(terms_table)
        current = terms_table.c
        stmt = stmt.on_conflict_do_update(
            index_elements=[current.tenant_id, current.term],
            set_={
                "docs": current.docs + stmt.excluded.docs,
                "max_impact": case(
                    (stmt.excluded.max_impact > current.max_impact, stmt.excluded.max_impact),
                    else_=current.max_impact,
                ),
            },
        )
        self.conn.execute(
            stmt,
            [
                {"tenant_id": self.tenant_id, "term": t, "docs": n, "max_impact": m}
                for t, n, m in sorted(changes)  # one lock order for every writer
            ],
        )

    def remove(self, pk: int) -> None:
        words = self.conn.execute(
            select(postings.c.term).where(
                postings.c.pk == pk, postings.c.tenant_id == self.tenant_id
            )
        ).scalars()
        changes = [(t, -1, 0.0) for t in words]
        if not changes:
            return
        self.conn.execute(
            delete(postings).where(postings.c.pk == pk, postings.c.tenant_id == self.tenant_id)
        )
        self._count(changes)
        # A word no entry holds any more leaves no trace (erasure purges what it said).
        self.conn.execute(
            delete(terms_table).where(
                terms_table.c.tenant_id == self.tenant_id,
                terms_table.c.term.in_([t for t, _, _ in changes]),
                terms_table.c.docs <= 0,
            )
        )

    def has(self, pk: int) -> bool:
        stmt = select(postings.c.pk).where(
            postings.c.pk == pk, postings.c.term == ENTRY, postings.c.tenant_id == self.tenant_id
        )
        return self.conn.execute(stmt).first() is not None

    def set_eligible(self, pk: int, eligible: bool) -> None:
        self.conn.execute(
            update(postings)
            .where(postings.c.pk == pk, postings.c.tenant_id == self.tenant_id)
            .values(eligible=int(eligible))
        )

    def words(self, pk: int) -> list[str]:
        """The words the entry holds (for readback)."""
        stmt = select(postings.c.term).where(
            postings.c.pk == pk, postings.c.tenant_id == self.tenant_id, postings.c.term != ENTRY
        )
        return sorted(self.conn.execute(stmt).scalars())

    # -- reads ----------------------------------------------------------------------------

    def term_stats(self, terms: Sequence[Term]) -> list[TermStats]:
        """The query words the tenant's index holds, with their idf and bound, by bound."""
        stems = sorted({t.stem for t in terms})
        rows = self.conn.execute(
            select(terms_table.c.term, terms_table.c.docs, terms_table.c.max_impact).where(
                terms_table.c.tenant_id == self.tenant_id,
                terms_table.c.term.in_([ENTRY, *stems]),
            )
        ).all()
        by_term = {r.term: r for r in rows}
        entries = by_term[ENTRY].docs if ENTRY in by_term else 0
        return lexical.by_upper_bound(
            [
                TermStats(
                    s,
                    lexical.idf(entries, by_term[s].docs),
                    by_term[s].max_impact,
                    by_term[s].docs,
                )
                for s in stems
                if s in by_term and by_term[s].docs > 0
            ]
        )

    def search(
        self, terms: Sequence[Term], limit: int, now_us: int, *, budget: int = DEFAULT_BUDGET
    ) -> list[Hit]:
        """Top `limit` eligible sources by score, ties broken by source id, with their text."""
        return self.search_certified(terms, limit, now_us, budget=budget)[0]

    def search_certified(
        self, terms: Sequence[Term], limit: int, now_us: int, *, budget: int = DEFAULT_BUDGET
    ) -> tuple[list[Hit], Certificate]:
        """As `search`, with what the result is certified to be: exact, or missing nothing
        that scores above `Certificate.bound` (only when a word's eligible postings outnumber
        `budget`)."""
        stats = self.term_stats(terms)
        if not stats:
            return [], Certificate(True, 0.0)
        chosen = lexical.essential(stats, None)
        read_budget: int | None = budget
        while True:
            hits = self._ranked(chosen, stats, limit, now_us, read_budget)
            kth = hits[-1].score if len(hits) == limit else None
            reads = {t.stem: self._read(t, read_budget) for t in chosen}
            cert = lexical.certify(stats, chosen, reads, kth)
            if cert.exact:
                return hits, cert
            wider = lexical.essential(stats, kth) if kth is not None else list(stats)
            if len(wider) > len(chosen):
                chosen = wider
            elif kth is None:
                read_budget = None  # never fewer than `limit` while eligible matches remain
                chosen = list(stats)
            else:
                return hits, cert

    def _read(self, term: TermStats, budget: int | None) -> ListRead:
        """How far the word's eligible postings are read with this budget."""
        if budget is None or term.docs <= budget:
            return ListRead(term.stem, True, 0.0)
        last = self.conn.execute(
            select(postings.c.impact)
            .where(
                postings.c.tenant_id == self.tenant_id,
                postings.c.term == term.stem,
                postings.c.eligible == 1,
            )
            .order_by(postings.c.impact.desc())
            .limit(1)
            .offset(budget - 1)
        ).scalar_one_or_none()
        return ListRead(term.stem, last is None, last or 0.0)

    def _score(self, pk, stats: Sequence[TermStats]):  # type: ignore[no-untyped-def]
        """The exact score of the source `pk` over every query word."""
        q = postings.alias("q")
        weight = case({t.stem: t.idf for t in stats}, value=q.c.term, else_=0.0)
        return (
            select(func.sum(weight * q.c.impact))
            .where(q.c.pk == pk, q.c.term.in_([t.stem for t in stats]))
            .scalar_subquery()
        )

    def _ranked(
        self,
        chosen: Sequence[TermStats],
        stats: Sequence[TermStats],
        limit: int,
        now_us: int,
        budget: int | None,
    ) -> list[Hit]:
        lists = []
        for t in chosen:
            read = (
                select(postings.c.pk)
                .where(
                    postings.c.tenant_id == self.tenant_id,
                    postings.c.term == t.stem,
                    postings.c.eligible == 1,
                )
                .order_by(postings.c.impact.desc())
            )
            if budget is not None:
                read = read.limit(budget)
            lists.append(read.subquery())
        reached = (
            lists[0].select()
            if len(lists) == 1
            else select(lists[0].c.pk).union(*[select(s.c.pk) for s in lists[1:]])
        ).cte("reached")
        scored = select(reached.c.pk, self._score(reached.c.pk, stats).label("score")).cte(
            "scored"
        )
        stmt = (
            select(
                sources.c.pk,
                sources.c.source_id,
                sources.c.revision,
                scored.c.score,
                sources.c.generated_form,
                sources.c.save_intent,
            )
            .select_from(scored.join(sources, sources.c.pk == scored.c.pk))
            .where(
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
            .order_by(scored.c.score.desc(), sources.c.source_id)
            .limit(limit)
        )
        return [Hit(*r) for r in self.conn.execute(stmt)]

    def matches(
        self, terms: Sequence[Term], now_us: int, cap: int
    ) -> tuple[list[MatchRow], int]:
        """Every indexed source of the tenant matching the terms, whatever its state: up to
        `cap` of them (eligible ones first, best first), and how many there are."""
        stats = self.term_stats(terms)
        if not stats:
            return [], 0
        weight = case({t.stem: t.idf for t in stats}, value=postings.c.term, else_=0.0)
        scored = (
            select(postings.c.pk, func.sum(weight * postings.c.impact).label("score"))
            .where(
                postings.c.tenant_id == self.tenant_id,
                postings.c.term.in_([t.stem for t in stats]),
            )
            .group_by(postings.c.pk)
            .cte("scored")
        )
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        stmt = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                scored.c.score,
                func.count().over().label("total"),
            )
            .select_from(scored.join(sources, sources.c.pk == scored.c.pk))
            .where(sources.c.tenant_id == self.tenant_id)
            .order_by(state != "eligible", scored.c.score.desc(), sources.c.source_id)
            .limit(cap)
        )
        rows = self.conn.execute(stmt).all()
        return [MatchRow(*r[:5]) for r in rows], (rows[0].total if rows else 0)
