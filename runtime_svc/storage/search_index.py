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
from functools import lru_cache

from sqlalchemy import Connection, Float, bindparam, case, delete, func, select, update
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
FIRST_DEPTH = 128
GROWTH = 4

_STATS = select(terms_table.c.term, terms_table.c.docs, terms_table.c.max_impact).where(
    terms_table.c.tenant_id == bindparam("tenant_id"),
    terms_table.c.term.in_(bindparam("terms", expanding=True)),
)
_NTH_IMPACT = (
    select(postings.c.impact)
    .where(
        postings.c.tenant_id == bindparam("tenant_id"),
        postings.c.term == bindparam("term"),
        postings.c.eligible == 1,
    )
    .order_by(postings.c.impact.desc())
    .limit(1)
    .offset(bindparam("offset"))
)


@lru_cache(maxsize=256)
def _ranked_statement(n_read: int, n_terms: int):  # type: ignore[no-untyped-def]
    """Top k of the sources reached through the words' eligible postings read so far (word
    `e<i>` read `d<i>` deep, best impact first), each scored exactly over all the query
    words (`t<i>` with idf `w<i>`), joined to its source row with the tenant check and the
    eligibility predicate, in one statement. Words, idfs and depths are parameters, so each
    shape compiles once."""
    lists = []
    for i in range(n_read):
        read = (
            select(postings.c.pk)
            .where(
                postings.c.tenant_id == bindparam("tenant_id"),
                postings.c.term == bindparam(f"e{i}"),
                postings.c.eligible == 1,
            )
            .order_by(postings.c.impact.desc())
            .limit(bindparam(f"d{i}"))
        )
        lists.append(read.subquery())
    reached = (
        lists[0].select()
        if n_read == 1
        else select(lists[0].c.pk).union(*[select(s.c.pk) for s in lists[1:]])
    ).cte("reached")
    q = postings.alias("q")
    weight = case(
        *[
            (q.c.term == bindparam(f"t{i}"), bindparam(f"w{i}", type_=Float))
            for i in range(n_terms)
        ],
        else_=0.0,
    )
    score = (
        select(func.sum(weight * q.c.impact))
        .where(q.c.pk == reached.c.pk, q.c.term.in_([bindparam(f"t{i}") for i in range(n_terms)]))
        .scalar_subquery()
    )
    scored = select(reached.c.pk, score.label("score")).cte("scored")
    return (
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
            sources.c.tenant_id == bindparam("tenant_id"),
            eligibility_sql.eligible(sources.c, bindparam("now_us")),
        )
        .order_by(scored.c.score.desc(), sources.c.source_id)
        .limit(bindparam("limit"))
    )


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
            _STATS, {"tenant_id": self.tenant_id, "terms": [ENTRY, *stems]}
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
        """As `search`, with what the result is certified to be: exact, or (only when a
        word's eligible postings outnumber `budget`) missing nothing that scores above
        `Certificate.bound`.

        Each word's eligible postings are read best impact first, to a depth that grows
        (`lexical.next_read`) only while the bound on what an unreached memory can score is
        not below the k-th score found; every memory reached is scored exactly."""
        stats = self.term_stats(terms)
        if not stats:
            return [], Certificate(True, 0.0)
        by_stem = {t.stem: t for t in stats}
        reads: dict[str, ListRead] = {}
        hits: list[Hit] = []
        kth: float | None = None
        limit_budget: int | None = budget
        while True:
            cert = lexical.certify(stats, reads, kth)
            if cert.exact:
                return hits, cert
            stepped = False
            while True:
                step = lexical.next_read(
                    stats, reads, first=FIRST_DEPTH, growth=GROWTH, budget=limit_budget
                )
                if step is None:
                    break
                reads[step[0]] = self._read(by_stem[step[0]], step[1])
                stepped = True
                if kth is None or kth > lexical.unreached_bound(stats, reads):
                    break
            if not stepped:
                if kth is None and limit_budget is not None:
                    # Never fewer than `limit` while eligible matches remain unread.
                    limit_budget = None
                    continue
                return hits, cert
            hits = self._ranked(reads, stats, limit, now_us)
            kth = hits[-1].score if len(hits) == limit else None

    def _read(self, term: TermStats, depth: int) -> ListRead:
        """The word's eligible postings read `depth` deep: where that stops."""
        if depth >= term.docs:
            return ListRead(depth, True, 0.0)
        last = self.conn.execute(
            _NTH_IMPACT, {"tenant_id": self.tenant_id, "term": term.stem, "offset": depth - 1}
        ).scalar_one_or_none()
        return ListRead(depth, last is None, last or 0.0)

    def _ranked(
        self,
        reads: dict[str, ListRead],
        stats: Sequence[TermStats],
        limit: int,
        now_us: int,
    ) -> list[Hit]:
        params: dict[str, object] = {"tenant_id": self.tenant_id, "now_us": now_us, "limit": limit}
        read = sorted(reads.items())
        for i, (stem, r) in enumerate(read):
            params[f"e{i}"], params[f"d{i}"] = stem, r.depth
        for i, t in enumerate(stats):
            params[f"t{i}"], params[f"w{i}"] = t.stem, t.idf
        stmt = _ranked_statement(len(read), len(stats))
        return [Hit(*r) for r in self.conn.execute(stmt, params)]

    def matches(self, terms: Sequence[Term], now_us: int, cap: int) -> tuple[list[MatchRow], int]:
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
