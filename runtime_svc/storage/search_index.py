"""The search index: postings kept in ordinary tables (the same on SQLite and PostgreSQL),
per-tenant statistics, and a top k that reads only the postings that can still matter.

`search_postings` holds one row per content word of an indexed source (its impact, see
`runtime_svc.domain.lexical`) plus one row with the empty word that marks the entry itself,
and whether the source is eligible (ignoring time-dependent rules). `search_terms` holds, per
tenant and word, in how many of the tenant's entries it occurs and the largest impact it had
(the empty word's row counts the tenant's entries). Scores are computed from the tenant's own
rows only.

Top k reads each word's eligible postings best impact first, and only as deep as needed:
words with few postings whole at once, then the word whose bound weighs most per posting
(`lexical.next_read`). The postings read (plain driver rows: thousands of them cost little)
give every memory reached an upper bound; in the order of that bound, memories are scored
exactly (their impacts for words whose postings did not tell are looked up by entry and
word) until the next bound is below the k-th score, and the sources of what can enter the
top k (ties included: they go to the source id) are checked against the tenant and the
whole eligibility predicate; a source refused there lowers the k-th score and the scoring
goes on, so the top k is taken among eligible sources and never under-filled. The k-th
score then certifies the result (`lexical.certify`) or the reading goes deeper. Only a word
in more than `budget` of the tenant's eligible memories can stop the search short of
certainty, and then what it may miss is bounded (`Certificate.bound`).

A large tenant (`search.held_min_entries`) is searched through its postings held in memory
instead (`storage.search_mirror`, ranked by `storage.held_search`), exactly as well.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import (
    BigInteger,
    Connection,
    Float,
    bindparam,
    case,
    delete,
    func,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.domain import lexical, passages
from runtime_svc.domain.lexical import Certificate, ListRead, TermStats
from runtime_svc.domain.passages import SHIFT, SPAN, Range, Window
from runtime_svc.domain.text import Term
from runtime_svc.storage import compiled, eligibility_sql, held_search
from runtime_svc.storage.held_search import HIT_COLUMNS
from runtime_svc.storage.models import SearchPosting, SearchTerm
from runtime_svc.storage.read_rows import driver_rows as _driver_rows
from runtime_svc.storage.read_rows import one_of as _one_of
from runtime_svc.storage.search_mirror import Mirrors
from runtime_svc.storage.sources import sources

postings = SearchPosting.__table__
terms_table = SearchTerm.__table__
ENTRY = ""  # the word of the row that marks an entry (and counts a tenant's entries)
DEFAULT_BUDGET = 20_000
FIRST_DEPTH = 128
GROWTH = 4


def _stats_statement(dialect: str):  # type: ignore[no-untyped-def]
    """The tenant's statistics of some terms (read by every search: compiled once)."""
    return select(terms_table.c.term, terms_table.c.docs, terms_table.c.max_impact).where(
        terms_table.c.tenant_id == bindparam("tenant_id"),
        _one_of(terms_table.c.term, "terms", dialect),
    )


def _source_of(key):  # type: ignore[no-untyped-def]
    """The source pk of an entry key (see `domain.passages.entry_key`)."""
    # A literal shift: PostgreSQL's `>>` takes an integer (not bigint) on its right.
    return key.op(">>", return_type=BigInteger)(literal_column(str(SHIFT)))


def _entries_of(pk: int):  # type: ignore[no-untyped-def]
    """The condition selecting every entry of source `pk` (its key range)."""
    return postings.c.pk.between(pk << SHIFT, (pk << SHIFT) + SPAN - 1)


def _unindexed_tenant(tenant_id: str):  # type: ignore[no-untyped-def]
    """The tenant check of a statement about one source's entries, through an expression no
    index serves (see `_OWN_ENTRIES`): the key range is what should be read."""
    return (postings.c.tenant_id + "") == tenant_id


def _score(pk, n_terms: int):  # type: ignore[no-untyped-def]
    """The exact score of source `pk`: its impact for each query word `t<i>` times that
    word's idf `w<i>`, added in the words' order, so every statement computes the same float
    for the same source (equal scores stay equal and ties go to the source id)."""
    total = None
    for i in range(n_terms):
        q = postings.alias(f"q{i}")
        impact = (
            select(q.c.impact).where(q.c.pk == pk, q.c.term == bindparam(f"t{i}")).scalar_subquery()
        )
        part = func.coalesce(impact, 0.0) * bindparam(f"w{i}", type_=Float)
        total = part if total is None else total + part
    return total


def _list_statement(dialect: str):  # type: ignore[no-untyped-def]
    """A word's eligible postings of the tenant (entry key, impact), best impact first,
    `depth` deep."""
    return (
        select(postings.c.pk, postings.c.impact)
        .where(
            postings.c.tenant_id == bindparam("tenant_id"),
            postings.c.term == bindparam("term"),
            postings.c.eligible == bindparam("eligible", 1),
        )
        .order_by(postings.c.impact.desc())
        .limit(bindparam("depth"))
    )


def _impacts_statement(dialect: str):  # type: ignore[no-untyped-def]
    """The impacts some entries have for a word (exact scores of entries reached through
    other words' postings)."""
    return select(postings.c.pk, postings.c.impact).where(
        _one_of(postings.c.pk, "keys", dialect),
        postings.c.term == bindparam("term"),
        # An expression, not the column: the lookups go through the primary key (entry,
        # word), never down the word's whole list in the impact index.
        postings.c.tenant_id.concat("") == bindparam("tenant_id"),
    )


def _eligible_statement(dialect: str):  # type: ignore[no-untyped-def]
    """Which of some sources are the tenant's and eligible now (the whole predicate), with
    what a hit returns."""
    return select(*HIT_COLUMNS).where(
        _one_of(sources.c.pk, "pks", dialect),
        sources.c.tenant_id == bindparam("tenant_id"),
        eligibility_sql.eligible(sources.c, bindparam("now_us")),
    )


# Scores are sums of products; a bound computed in another order may differ from the exact
# score in its last bits, so comparisons against bounds leave this much room.
_SLACK = 1e-9


def _insert_postings(dialect: str):  # type: ignore[no-untyped-def]
    return postings.insert()


def _count_statement(dialect: str):  # type: ignore[no-untyped-def]
    """Upsert of a word's entry count (added) and impact bound (raised)."""
    stmt = (postgresql if dialect == "postgresql" else sqlite).insert(terms_table)
    current = terms_table.c
    return stmt.on_conflict_do_update(
        index_elements=[current.tenant_id, current.term],
        set_={
            "docs": current.docs + stmt.excluded.docs,
            "max_impact": case(
                (stmt.excluded.max_impact > current.max_impact, stmt.excluded.max_impact),
                else_=current.max_impact,
            ),
        },
    )


def _execute_many(conn: Connection, make, rows: list[dict]) -> None:  # type: ignore[no-untyped-def]
    """Many rows of one index write, through the statements compiled once (`compiled`)."""
    compiled.execute_many(conn, _core(make, conn.dialect.name), rows)


@lru_cache(maxsize=8)
def _core(make, dialect: str):  # type: ignore[no-untyped-def]
    return make(dialect)


@dataclass(frozen=True)
class Hit:
    pk: int
    source_id: str
    revision: int
    score: float  # higher is better
    text: str  # the generated form, or the passage's text
    save_intent: str
    passage: Range | None = None  # the conversation's messages this hit is (None: whole)


def make_hit(score: float, key: int, row: tuple, window: Window) -> Hit:
    """A hit of an entry (`key`: its entry key, or just its low bits) of the source `row`
    (`held_search.HIT_COLUMNS`): a passage's text rendered from the stored conversation."""
    pk, source_id, revision, generated_form, save_intent, _kind, raw = row
    rng = passages.range_of(key)
    if rng is None:
        return Hit(pk, source_id, revision, score, generated_form, save_intent)
    text = passages.render_stored(raw, rng, window)
    return Hit(pk, source_id, revision, score, text, save_intent, rng)


def _kth(scores: dict[int, float], refused: set[int], limit: int, grouped: bool) -> float | None:
    """The k-th best score among the entries scored (per source when `grouped`), leaving
    out the sources refused; None when fewer."""
    if grouped:
        per: dict[int, float] = {}
        for k, v in scores.items():
            s = k >> SHIFT
            if s not in refused and v > per.get(s, -1.0):
                per[s] = v
        values = list(per.values())
    else:
        values = [v for k, v in scores.items() if k >> SHIFT not in refused]
    if len(values) < limit:
        return None
    return heapq.nlargest(limit, values)[-1]


@dataclass(frozen=True)
class MatchRow:
    source_id: str
    revision: int
    classification: str
    state: str
    score: float


# -- the write side's statements, built once (each insert runs several of them) -----------

# Every entry of one source (`lo`..`hi`, its key range) in the tenant. The tenant is compared
# through an expression that no index serves: given the plain column, SQLite reads the
# tenant's whole (tenant, word) index, every entry of the tenant, instead of the key range.
_OWN_ENTRIES = (
    postings.c.pk.between(bindparam("lo"), bindparam("hi")),
    _unindexed_tenant(bindparam("tenant")),
)
_HAS = select(postings.c.pk).where(*_OWN_ENTRIES, postings.c.term == ENTRY).limit(1)
_TERMS_OF = select(postings.c.term).where(*_OWN_ENTRIES)
_DELETE_ENTRIES = delete(postings).where(*_OWN_ENTRIES)
_SET_ELIGIBLE = (
    update(postings)
    .where(*_OWN_ENTRIES)
    .values(eligible=bindparam("flag"), stamp=bindparam("stamp"))
)
_SET_INDEXED_REVISION = (
    update(sources)
    .where(sources.c.pk == bindparam("source_pk"), sources.c.tenant_id == bindparam("tenant"))
    .values(indexed_revision=bindparam("indexed"))
)


# PostgreSQL: an entry's postings and its words' counts in one statement (a data-modifying
# CTE), rows passed as arrays; the counts as `_count_statement` adds them, in word order.
_PG_PUT = text(
    """
    WITH added AS (
        INSERT INTO search_postings (pk, term, tenant_id, eligible, impact, stamp)
        SELECT p.pk, p.term, :tenant_id, p.eligible, p.impact,
            CASE WHEN p.term = '' THEN CAST(:stamp AS BIGINT) END
        FROM unnest(
            CAST(:pk AS BIGINT[]), CAST(:term AS TEXT[]),
            CAST(:eligible AS INTEGER[]), CAST(:impact AS DOUBLE PRECISION[])
        ) AS p(pk, term, eligible, impact)
    )
    INSERT INTO search_terms AS current (tenant_id, term, docs, max_impact)
    SELECT :tenant_id, c.term, c.docs, c.max_impact
    FROM unnest(
        CAST(:count_term AS TEXT[]), CAST(:count_docs AS BIGINT[]),
        CAST(:count_max AS DOUBLE PRECISION[])
    ) WITH ORDINALITY AS c(term, docs, max_impact, n)
    ORDER BY c.n
    ON CONFLICT (tenant_id, term) DO UPDATE SET
        docs = current.docs + excluded.docs,
        max_impact = GREATEST(current.max_impact, excluded.max_impact)
    """
)


def _own_entries(tenant_id: str, pk: int) -> dict[str, object]:
    return {"lo": pk << SHIFT, "hi": (pk << SHIFT) + SPAN - 1, "tenant": tenant_id}


def _set_indexed_revision(conn: Connection, tenant_id: str, pks: list[int], revision: int) -> None:
    """The source row's record of which revision its index entry was derived from (0: none).
    Written here only (or with the row of a source created with its entry, by the source
    writer): the index is the one truth of what is indexed."""
    if pks:
        compiled.execute_many(
            conn,
            _SET_INDEXED_REVISION,
            [{"source_pk": pk, "tenant": tenant_id, "indexed": revision} for pk in pks],
        )


class SearchIndex:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        window: Window | None = None,
        *,
        stamp: Callable[[], int] | None = None,
        words_removed: Callable[[list[str]], None] | None = None,
        mirrors: Mirrors | None = None,
    ) -> None:
        """`stamp`: gives each change of an entry the tenant's next index stamp (kept on the
        entry, see `storage.search_mirror`); `words_removed`: told of the words a change
        removes from the index (postings held in memory then forget them); `mirrors`:
        large tenants' postings held in memory."""
        self.conn = conn
        self.tenant_id = tenant_id
        self.window = window or Window()
        self._stamp = stamp or (lambda: None)  # type: ignore[return-value,arg-type]
        self._words_removed = words_removed or (lambda words: None)
        self._mirrors = mirrors

    # -- writes: the entry of one source -------------------------------------------------

    def put(
        self, pk: int, body: str, *, eligible: bool, revision: int, revision_recorded: bool = False
    ) -> None:
        """The entry of one source. `revision_recorded`: its row, written in the same
        transaction, already records `revision` (a new source, see the source writer)."""
        self._put([(pk, [(passages.entry_key(pk), body)], eligible)], revision, revision_recorded)

    def put_many(self, rows: list[tuple[int, str, bool]], revision: int = 1) -> None:
        """Entries for (pk, generated form, eligible) per source, derived from `revision`."""
        self._put(
            [(pk, [(passages.entry_key(pk), body)], eligible) for pk, body, eligible in rows],
            revision,
        )

    def put_passages(
        self,
        pk: int,
        entries: Sequence[passages.Passage],
        *,
        eligible: bool,
        revision: int,
        revision_recorded: bool = False,
    ) -> None:
        """A conversation's entries: one per passage, keyed by its message range."""
        keyed = [(passages.entry_key(pk, p.range), p.text) for p in entries]
        self._put([(pk, keyed, eligible)], revision, revision_recorded)

    def _put(
        self,
        rows: list[tuple[int, list[tuple[int, str]], bool]],
        revision: int,
        revision_recorded: bool = False,
    ) -> None:
        if not rows:
            return
        if not revision_recorded:
            _set_indexed_revision(self.conn, self.tenant_id, [pk for pk, _, _ in rows], revision)
        values, docs, best = [], {}, {}
        stamp = self._stamp()
        for _, entries, eligible in rows:
            for key, body in entries:
                entry = lexical.analyse(body)
                words = {ENTRY: float(entry.length), **entry.impacts}
                for term, weight in words.items():
                    values.append(
                        {
                            "pk": key,
                            "term": term,
                            "tenant_id": self.tenant_id,
                            "eligible": int(eligible),
                            "impact": weight,
                            "stamp": stamp if term == ENTRY else None,
                        }
                    )
                    docs[term] = docs.get(term, 0) + 1
                    best[term] = max(best.get(term, 0.0), weight)
        counts = [(t, n, best[t]) for t, n in sorted(docs.items())]  # one lock order
        if self.conn.dialect.name == "postgresql":  # one round trip for both tables
            self.conn.execute(
                _PG_PUT,
                {
                    "pk": [v["pk"] for v in values],
                    "term": [v["term"] for v in values],
                    "eligible": [v["eligible"] for v in values],
                    "impact": [v["impact"] for v in values],
                    "stamp": stamp,
                    "tenant_id": self.tenant_id,
                    "count_term": [t for t, _, _ in counts],
                    "count_docs": [n for _, n, _ in counts],
                    "count_max": [m for _, _, m in counts],
                },
            )
            return
        _execute_many(self.conn, _insert_postings, values)
        self._count(counts)

    def _count(self, changes: list[tuple[str, int, float]]) -> None:
        """Adds to each word's entry count, raising its impact bound if needed."""
        _execute_many(
            self.conn,
            _count_statement,
            [
                {"tenant_id": self.tenant_id, "term": t, "docs": n, "max_impact": m}
                for t, n, m in sorted(changes)  # one lock order for every writer
            ],
        )

    def remove(self, pk: int) -> bool:
        """Deletes the source's entries (its passages); whether there were any."""
        own = _own_entries(self.tenant_id, pk)
        counted: dict[str, int] = {}
        for t in self.conn.execute(_TERMS_OF, own).scalars():
            counted[t] = counted.get(t, 0) - 1
        changes = [(t, n, 0.0) for t, n in counted.items()]
        _set_indexed_revision(self.conn, self.tenant_id, [pk], 0)
        if not changes:
            return False
        self.conn.execute(_DELETE_ENTRIES, own)
        self._count(changes)
        # A word no entry holds any more leaves no trace (erasure purges what it said), in
        # the database nor in any runtime's memory (`words_removed`).
        removed = (
            self.conn.execute(
                delete(terms_table)
                .where(
                    terms_table.c.tenant_id == self.tenant_id,
                    terms_table.c.term.in_([t for t, _, _ in changes]),
                    terms_table.c.docs <= 0,
                )
                .returning(terms_table.c.term)
            )
            .scalars()
            .all()
        )
        if removed:
            self._words_removed(removed)
        return True

    def has(self, pk: int) -> bool:
        return self.conn.execute(_HAS, _own_entries(self.tenant_id, pk)).first() is not None

    def passages(self, pk: int) -> list[Range]:
        """The message ranges of the source's passage entries (none for a whole-text one)."""
        stmt = select(postings.c.pk).where(
            _entries_of(pk), postings.c.term == ENTRY, _unindexed_tenant(self.tenant_id)
        )
        found = (passages.range_of(k) for k in self.conn.execute(stmt).scalars())
        return sorted((r for r in found if r is not None), key=lambda r: (r.end, r.start))

    def set_eligible(self, pk: int, eligible: bool, revision: int | None = None) -> None:
        self.conn.execute(
            _SET_ELIGIBLE,
            {**_own_entries(self.tenant_id, pk), "flag": int(eligible), "stamp": self._stamp()},
        )
        if revision is not None:
            _set_indexed_revision(self.conn, self.tenant_id, [pk], revision)

    def retrievable(self, pk: int, now_us: int) -> bool:
        """Whether a search whose words match this entry would return it: the ranked
        query's own filter (the entry's eligibility, tenant, the full predicate) on it."""
        stmt = (
            select(sources.c.pk)
            .select_from(postings.join(sources, sources.c.pk == _source_of(postings.c.pk)))
            .where(
                _entries_of(pk),
                postings.c.term == ENTRY,
                _unindexed_tenant(self.tenant_id),
                postings.c.eligible == 1,
                sources.c.pk == pk,  # read by its key, not among the tenant's sources
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
        )
        return self.conn.execute(stmt).first() is not None

    def words(self, pk: int) -> list[str]:
        """The words the entry holds (for readback)."""
        stmt = (
            select(postings.c.term)
            .where(_entries_of(pk), _unindexed_tenant(self.tenant_id), postings.c.term != ENTRY)
            .distinct()
        )
        return sorted(self.conn.execute(stmt).scalars())

    # -- reads ----------------------------------------------------------------------------

    def term_stats(self, terms: Sequence[Term]) -> list[TermStats]:
        """The query words the tenant's index holds, with their idf and bound, by bound."""
        return self._stats(terms)[1]

    def _stats(self, terms: Sequence[Term]) -> tuple[int, list[TermStats]]:
        """The tenant's entry count, and `term_stats`."""
        stems = sorted({t.stem for t in terms})
        rows = _driver_rows(
            self.conn, _stats_statement, {"tenant_id": self.tenant_id, "terms": [ENTRY, *stems]}
        )
        held = {term: (docs, max_impact) for term, docs, max_impact in rows}
        entries = held.pop(ENTRY, (0, 0.0))[0]
        return entries, lexical.by_upper_bound(
            [
                TermStats(s, lexical.idf(entries, docs), max_impact, docs)
                for s, (docs, max_impact) in sorted(held.items())
                if docs > 0
            ]
        )

    def search(
        self,
        terms: Sequence[Term],
        limit: int,
        now_us: int,
        *,
        budget: int = DEFAULT_BUDGET,
        grouped: bool = True,
    ) -> list[Hit]:
        """Top `limit` eligible sources by score (each its best passage), ties broken by
        source id, with their text; with `grouped` off, the top passages (several of one
        source may appear)."""
        return self.search_certified(terms, limit, now_us, budget=budget, grouped=grouped)[0]

    def search_certified(
        self,
        terms: Sequence[Term],
        limit: int,
        now_us: int,
        *,
        budget: int = DEFAULT_BUDGET,
        grouped: bool = True,
    ) -> tuple[list[Hit], Certificate]:
        """As `search`, with what the result is certified to be: exact, or (only when a
        word's eligible postings outnumber `budget`) missing nothing that scores above
        `Certificate.bound`.

        Words' eligible postings are read best impact first, the word whose bound weighs
        most per posting first (`lexical.next_read`), and deeper only while the result is
        not certified (`lexical.certify`). Each ranking scores exactly every memory reached
        whose bound can still reach the k-th score, so what it leaves out is bounded by the
        postings not read alone."""
        entries, stats = self._stats(terms)
        mirrors = self._mirrors
        if mirrors is not None and entries < mirrors.min_entries and mirrors.holds(self.tenant_id):
            mirrors.forget(self.tenant_id)  # searched in the tables from now: nothing held
        if not stats:
            return [], Certificate(True, 0.0)
        if mirrors is not None and entries >= mirrors.min_entries:
            hits = held_search.top(
                self.conn, self.tenant_id, mirrors, stats, limit, now_us, grouped, self._hit
            )
            return hits, Certificate(True, 0.0)
        by_stem = {t.stem: t for t in stats}
        lists: dict[str, list[tuple[int, float]]] = {}
        # Words with few postings are read to their end at once.
        reads = {t.stem: self._read(t, FIRST_DEPTH, lists) for t in stats if t.docs <= FIRST_DEPTH}
        hits: list[Hit] = []
        kth: float | None = None
        cert = Certificate(False, 0.0)
        allowed: int | None = budget
        ranked = False
        while True:
            if ranked or not reads:
                stepped = False
                while True:
                    step = lexical.next_read(
                        stats, reads, first=FIRST_DEPTH, growth=GROWTH, budget=allowed
                    )
                    if step is None:
                        break
                    reads[step[0]] = self._read(by_stem[step[0]], step[1], lists)
                    stepped = True
                    if kth is None or kth > lexical.unreached_bound(stats, reads):
                        break
                if not stepped:
                    if kth is None and allowed is not None:
                        allowed = None  # never fewer than `limit` while eligible matches are unread
                        continue
                    return hits, cert
            ranked = True
            hits = self._ranked(stats, reads, lists, limit, now_us, grouped)
            kth = hits[-1].score if len(hits) == limit else None
            cert = lexical.certify(stats, reads, kth, None)
            if cert.exact:
                return hits, cert

    def _read(
        self, term: TermStats, depth: int, lists: dict[str, list[tuple[int, float]]]
    ) -> ListRead:
        """The word's first `depth` eligible postings (entry key, impact), best first, into
        `lists`; and where they stop."""
        rows = _driver_rows(
            self.conn,
            _list_statement,
            {"tenant_id": self.tenant_id, "term": term.stem, "depth": depth},
        )
        lists[term.stem] = rows
        return ListRead(depth, len(rows) < depth, rows[-1][1] if rows else 0.0)

    def _ranked(
        self,
        stats: Sequence[TermStats],
        reads: dict[str, ListRead],
        lists: dict[str, list[tuple[int, float]]],
        limit: int,
        now_us: int,
        grouped: bool,
    ) -> list[Hit]:
        """The best `limit` eligible entries among those reached through the postings read
        (with `grouped`, the best sources, each by its best entry, ties by entry key), best
        first, ties by source id: each entry reached gets an upper bound (its impacts seen,
        plus each other word's `lexical.contribution`); entries are scored exactly, and
        checked against their source rows (the tenant and the whole eligibility predicate),
        in order of that bound, until the next bound is below the k-th score."""
        n = len(stats)
        contrib = [lexical.contribution(t, reads.get(t.stem)) for t in stats]
        unseen = sum(contrib)
        known: dict[int, list[float | None]] = {}
        bound: dict[int, float] = {}
        for i, t in enumerate(stats):
            rows = lists.get(t.stem) if t.stem in reads else None
            if not rows:
                continue
            w, c = t.idf, contrib[i]
            for key, impact in rows:
                got = known.get(key)
                if got is None:
                    got = known[key] = [None] * n
                    bound[key] = unseen
                got[i] = impact
                bound[key] += impact * w - c
        order = sorted(bound, key=bound.__getitem__, reverse=True)
        scores: dict[int, float] = {}
        refused: set[int] = set()  # sources not eligible now (time-dependent rules)
        rows: dict[int, tuple] = {}
        dropped: dict[int, float] = {}  # entry: a tighter bound, below the floor it met
        pos, size = 0, max(2 * limit, 64)
        while True:
            # Score exactly, best bound first, every entry whose bound reaches the k-th score.
            floor = _kth(scores, refused, limit, grouped)
            chunk = [k for k, b in dropped.items() if floor is None or b + _SLACK >= floor]
            for k in chunk:
                del dropped[k]
            while pos < len(order) and len(chunk) < size:
                if floor is not None and bound[order[pos]] + _SLACK < floor:
                    break  # and the rest (a source refused later may lower the floor)
                chunk.append(order[pos])
                pos += 1
            if chunk:
                scored, below = self._exact(stats, reads, contrib, known, chunk, floor)
                scores |= scored
                dropped |= below
                size = min(size * 4, 4096)
                continue
            # Check the sources of what can be in the top k (ties included: they go to the
            # source id) against the tenant and the whole predicate; one refused may let
            # more in.
            contenders = [
                k
                for k, v in scores.items()
                if (floor is None or v >= floor) and k >> SHIFT not in refused
            ]
            unchecked = sorted({k >> SHIFT for k in contenders} - rows.keys())
            if not unchecked:
                break
            for r in _driver_rows(
                self.conn,
                _eligible_statement,
                {
                    "pks": unchecked,
                    "tenant_id": self.tenant_id,
                    "now_us": now_us,
                },
            ):
                rows[r[0]] = r
            refused |= set(unchecked) - rows.keys()
        best: dict[int, tuple[float, str, int]] = {}
        for key in contenders:
            row = rows[key >> SHIFT]
            found = (scores[key], row[1], key)
            slot = row[0] if grouped else key
            held = best.get(slot)
            if held is None or (-found[0], key) < (-held[0], held[2]):
                best[slot] = found
        top = sorted(best.values(), key=lambda h: (-h[0], h[1], h[2]))[:limit]
        return [self._hit(score, key, rows[key >> SHIFT]) for score, _, key in top]

    def _exact(
        self,
        stats: Sequence[TermStats],
        reads: dict[str, ListRead],
        contrib: list[float],
        known: dict[int, list[float | None]],
        keys: list[int],
        floor: float | None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        """The exact scores of some entries, and a tighter bound for those that cannot reach
        `floor`. An entry's impact for a word its postings read do not tell is looked up, the
        word that can add most first; after each word, entries whose bound (impacts known,
        plus the contribution of each word still unknown) falls below `floor` are set aside
        with it. A score is each word's impact times its idf, added in the words' order, as
        every statement adds them (equal scores stay equal; ties go to the source id)."""
        n = len(stats)
        weights = [t.idf for t in stats]
        open_ = [
            i
            for i, t in enumerate(stats)
            if not (t.stem in reads and reads[t.stem].exhausted)  # else: absent means 0
        ]
        open_.sort(key=lambda i: -contrib[i])
        alive = keys
        below: dict[int, float] = {}
        for step, i in enumerate(open_):
            missing = [k for k in alive if known[k][i] is None]
            if missing:
                for key, impact in _driver_rows(
                    self.conn,
                    _impacts_statement,
                    {"keys": missing, "term": stats[i].stem, "tenant_id": self.tenant_id},
                ):
                    known[key][i] = impact
                for k in missing:
                    if known[k][i] is None:
                        known[k][i] = 0.0  # looked up: the entry does not hold the word
            if floor is None or step == len(open_) - 1:
                continue
            later = open_[step + 1 :]
            kept = []
            for k in alive:
                got = known[k]
                b = sum(got[j] * weights[j] for j in range(n) if got[j])
                b += sum(contrib[j] for j in later if got[j] is None)
                if b + _SLACK < floor:
                    below[k] = b
                else:
                    kept.append(k)
            alive = kept
        out = {}
        for key in alive:
            total = 0.0
            for i, v in enumerate(known[key]):
                part = (v or 0.0) * weights[i]
                total = part if i == 0 else total + part
            out[key] = total
        return out, below

    def _hit(self, score: float, key: int, row: tuple) -> Hit:
        return make_hit(score, key, row, self.window)

    def matches(self, terms: Sequence[Term], now_us: int, cap: int) -> tuple[list[MatchRow], int]:
        """Every indexed source of the tenant matching the terms, whatever its state: up to
        `cap` of them (eligible ones first, best first), and how many there are. Matches are
        gathered and ranked by one pass over the words' postings; the `cap` kept are scored
        again as search scores them, so an explanation shows search's scores and order. Cost
        follows the number of matches."""
        stats = self.term_stats(terms)
        if not stats:
            return [], 0
        params: dict[str, object] = {"tenant_id": self.tenant_id, "now_us": now_us, "cap": cap}
        for i, t in enumerate(stats):
            params[f"t{i}"], params[f"w{i}"] = t.stem, t.idf
        params["terms"] = [t.stem for t in stats]
        rows = self.conn.execute(_matches_statement(len(stats)), params).all()
        found = sorted(
            (MatchRow(r.source_id, r.revision, r.classification, r.state, r.score) for r in rows),
            key=lambda m: (m.state != "eligible", -m.score, m.source_id),
        )
        return found, (rows[0].total if rows else 0)


@lru_cache(maxsize=64)
def _matches_statement(n_terms: int):  # type: ignore[no-untyped-def]
    """All the tenant's postings of the words in one pass: per source an approximate score
    and whether it is eligible (ignoring time); the best `cap` of them, eligible first, are
    joined to their source rows for their state and scored exactly; `total` counts them
    all. (A source eligible by its postings but whose assent expired since sorts among the
    eligible here; the caller sorts the kept ones again by their state.)"""
    weight = case(
        *[
            (postings.c.term == bindparam(f"t{i}"), bindparam(f"w{i}", type_=Float))
            for i in range(n_terms)
        ],
        else_=0.0,
    )
    gathered = (
        select(
            postings.c.pk,
            func.sum(weight * postings.c.impact).label("approx"),
            func.max(postings.c.eligible).label("eligible"),
        )
        .where(
            postings.c.tenant_id == bindparam("tenant_id"),
            postings.c.term.in_(bindparam("terms", expanding=True)),
        )
        .group_by(postings.c.pk)
        .cte("gathered")
    )
    best = select(
        gathered,
        func.row_number()
        .over(
            partition_by=_source_of(gathered.c.pk),
            order_by=(gathered.c.approx.desc(), gathered.c.pk),
        )
        .label("rn"),
    ).subquery("best")  # each source's best passage
    kept = (
        select(best.c.pk, func.count().over().label("total"))
        .where(best.c.rn == 1)
        .order_by(best.c.eligible.desc(), best.c.approx.desc(), best.c.pk)
        .limit(bindparam("cap"))
        .cte("kept")
    )
    state = eligibility_sql.state(sources.c, bindparam("now_us")).label("state")
    return (
        select(
            sources.c.source_id,
            sources.c.revision,
            sources.c.classification,
            state,
            _score(kept.c.pk, n_terms).label("score"),
            kept.c.total,
        )
        .select_from(kept.join(sources, sources.c.pk == _source_of(kept.c.pk)))
        .where(sources.c.tenant_id == bindparam("tenant_id"))
    )
