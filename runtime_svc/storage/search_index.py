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
(`lexical.next_read`). Each round is one statement: the memories reached get a lower and an
upper bound from what was read; those whose upper bound reaches the k-th best lower bound
are scored exactly over all query words and joined to their source rows with the tenant
check and the whole eligibility predicate, before ORDER BY and LIMIT. The k-th score then
certifies the result (`lexical.certify`) or the reading goes deeper. Only a word in more than
`budget` of the tenant's eligible memories can stop the search short of certainty, and then
what it may miss is bounded (`Certificate.bound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import (
    BigInteger,
    Connection,
    Dialect,
    Float,
    bindparam,
    case,
    cast,
    delete,
    func,
    literal_column,
    select,
    text,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from runtime_svc.domain import lexical, passages
from runtime_svc.domain.lexical import Certificate, ListRead, TermStats
from runtime_svc.domain.passages import SHIFT, SPAN, Range, Window
from runtime_svc.domain.sources import Body, SourceKind
from runtime_svc.domain.text import Term
from runtime_svc.storage import compiled, eligibility_sql
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


def _list(i: int, *columns):  # type: ignore[no-untyped-def]
    """Word `e<i>`'s eligible postings of the tenant, best impact first, `d<i>` deep."""
    return (
        select(*columns)
        .where(
            postings.c.tenant_id == bindparam("tenant_id"),
            postings.c.term == bindparam(f"e{i}"),
            postings.c.eligible == 1,
        )
        .order_by(postings.c.impact.desc())
        .limit(bindparam(f"d{i}"))
        .subquery()
    )


_FIRST = _list(0, postings.c.impact)
# How many postings a word's reading got, and the smallest impact among them.
_READ = select(func.count().label("n"), func.min(_FIRST.c.impact))


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


@lru_cache(maxsize=8)
def _driver_sql(make, dialect: Dialect) -> tuple[str, tuple[str, ...] | None]:  # type: ignore[no-untyped-def]
    """A write statement compiled once for the dialect, and its parameter order if the
    driver takes positional parameters."""
    compiled = make(dialect.name).compile(dialect=dialect, column_keys=None)
    return str(compiled), (tuple(compiled.positiontup) if compiled.positional else None)


@lru_cache(maxsize=8)
def _core(make, dialect: str):  # type: ignore[no-untyped-def]
    return make(dialect)


def _execute_many(conn: Connection, make, rows: list[dict]) -> None:  # type: ignore[no-untyped-def]
    """Many rows of one write. On SQLite straight to the driver (the index is written on
    every insert; this skips SQLAlchemy's per-call statement handling); on PostgreSQL through
    SQLAlchemy, which sends them as one multi-row statement."""
    if conn.dialect.name != "sqlite":
        conn.execute(_core(make, conn.dialect.name), rows)
        return
    sql, order = _driver_sql(make, conn.dialect)
    conn.exec_driver_sql(sql, [tuple(r[k] for k in order) for r in rows] if order else rows)


@lru_cache(maxsize=256)
def _ranked_statement(n_read: int, n_terms: int, grouped: bool = True):  # type: ignore[no-untyped-def]
    """One round of the top k, in one statement (words, idfs, depths and bounds are
    parameters, so each shape compiles once):

    - `seen`: the memories reached through the postings read (word `e<i>`, `d<i>` deep), with
      the lower bound of their score (the impacts seen, times idf `ew<i>`) and the upper
      bound (plus, for each word not seen, its contribution: `c<i>` for a word read, its
      bound for a word not read; `unseen` is their sum);
    - `floor`: the k-th best lower bound; memories whose upper bound is below it cannot
      enter the top k, the others (all of them when `open`) are the contenders;
    - the contenders scored exactly over every query word (`t<j>`, idf `w<j>`), joined to
      their source rows with the tenant check and the eligibility predicate, best first,
      ties by source id, k.

    Entries are passages; `grouped` keeps each source's best one only (ties by key), and
    then the floor is the k-th best source's lower bound."""
    parts = []
    for i in range(n_read):
        read = _list(i, postings.c.pk, postings.c.impact)
        parts.append(
            select(
                read.c.pk,
                (read.c.impact * bindparam(f"ew{i}", type_=Float)).label("part"),
                cast(bindparam(f"c{i}", type_=Float), Float).label("c"),
            )
        )
    lists = (parts[0] if n_read == 1 else union_all(*parts)).subquery("lists")
    seen = (
        select(
            lists.c.pk,
            func.sum(lists.c.part).label("lb"),
            (func.sum(lists.c.part) + bindparam("unseen", type_=Float) - func.sum(lists.c.c)).label(
                "ub"
            ),
        )
        .group_by(lists.c.pk)
        .cte("seen")
        .prefix_with("MATERIALIZED")
    )
    if grouped:
        per_source = (
            select(func.max(seen.c.lb).label("lb")).group_by(_source_of(seen.c.pk)).subquery()
        )
        floor = (
            select(per_source.c.lb)
            .order_by(per_source.c.lb.desc())
            .limit(1)
            .offset(bindparam("kth"))
            .scalar_subquery()
        )
    else:
        floor = (
            select(seen.c.lb)
            .order_by(seen.c.lb.desc())
            .limit(1)
            .offset(bindparam("kth"))
            .scalar_subquery()
        )
    cut = case((bindparam("open") == 1, -1.0), else_=func.coalesce(floor, -1.0))
    contenders = select(seen.c.pk).where(seen.c.ub >= cut).cte("contenders")
    score = _score(contenders.c.pk, n_terms)
    scored = (
        select(
            sources.c.pk,
            sources.c.source_id,
            sources.c.revision,
            score.label("score"),
            sources.c.generated_form,
            sources.c.save_intent,
            cut.label("floor"),
            contenders.c.pk.label("entry"),
            sources.c.raw,
            sources.c.kind,
        )
        .select_from(contenders.join(sources, sources.c.pk == _source_of(contenders.c.pk)))
        .where(
            sources.c.tenant_id == bindparam("tenant_id"),
            eligibility_sql.eligible(sources.c, bindparam("now_us")),
        )
    )
    if not grouped:
        return scored.order_by(
            literal_column("score").desc(), sources.c.source_id, literal_column("entry")
        ).limit(bindparam("limit"))
    ranked = scored.add_columns(
        func.row_number()
        .over(partition_by=sources.c.pk, order_by=(score.desc(), contenders.c.pk))
        .label("rn")
    ).subquery("ranked")
    return (
        select(*[c for c in ranked.c if c.name != "rn"])
        .where(ranked.c.rn == 1)
        .order_by(ranked.c.score.desc(), ranked.c.source_id)
        .limit(bindparam("limit"))
    )


@dataclass(frozen=True)
class Hit:
    pk: int
    source_id: str
    revision: int
    score: float  # higher is better
    text: str  # the generated form, or the passage's text
    save_intent: str
    passage: Range | None = None  # the conversation's messages this hit is (None: whole)


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
_SET_ELIGIBLE = update(postings).where(*_OWN_ENTRIES).values(eligible=bindparam("flag"))
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
        INSERT INTO search_postings (pk, term, tenant_id, eligible, impact)
        SELECT p.pk, p.term, :tenant_id, p.eligible, p.impact
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
    def __init__(self, conn: Connection, tenant_id: str, window: Window | None = None) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self.window = window or Window()

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
        # A word no entry holds any more leaves no trace (erasure purges what it said).
        self.conn.execute(
            delete(terms_table).where(
                terms_table.c.tenant_id == self.tenant_id,
                terms_table.c.term.in_([t for t, _, _ in changes]),
                terms_table.c.docs <= 0,
            )
        )
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
            _SET_ELIGIBLE, {**_own_entries(self.tenant_id, pk), "flag": int(eligible)}
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
        not certified (`lexical.certify`)."""
        stats = self.term_stats(terms)
        if not stats:
            return [], Certificate(True, 0.0)
        by_stem = {t.stem: t for t in stats}
        # Words with few postings are read to their end at once (one statement for all).
        reads = {t.stem: ListRead(FIRST_DEPTH, True, 0.0) for t in stats if t.docs <= FIRST_DEPTH}
        hits: list[Hit] = []
        kth: float | None = None
        floor: float | None = None
        cert = Certificate(False, 0.0)
        allowed: int | None = budget
        open_ = False
        first = True
        while True:
            stepped = False
            while not (first and reads):
                step = lexical.next_read(
                    stats, reads, first=FIRST_DEPTH, growth=GROWTH, budget=allowed
                )
                if step is None:
                    break
                reads[step[0]] = self._read(by_stem[step[0]], step[1])
                stepped = True
                if kth is None or kth > lexical.unreached_bound(stats, reads):
                    break
            if not first and not stepped:
                if all(t.stem in reads and reads[t.stem].exhausted for t in stats):
                    if open_:
                        return hits, cert
                    open_ = True  # everything read: score every memory reached
                elif kth is None and allowed is not None:
                    allowed = None  # never fewer than `limit` while eligible matches are unread
                    continue
                else:
                    return hits, cert
            first = False
            hits, floor = self._ranked(stats, reads, limit, now_us, open_, grouped)
            kth = hits[-1].score if len(hits) == limit else None
            cert = lexical.certify(stats, reads, kth, None if open_ else floor)
            if cert.exact:
                return hits, cert

    def _read(self, term: TermStats, depth: int) -> ListRead:
        """Where the word's eligible postings stop when read `depth` deep."""
        if depth >= term.docs:
            return ListRead(depth, True, 0.0)
        n, last = self.conn.execute(
            _READ, {"tenant_id": self.tenant_id, "e0": term.stem, "d0": depth}
        ).one()
        return ListRead(depth, n < depth, last or 0.0)

    def _ranked(
        self,
        stats: Sequence[TermStats],
        reads: dict[str, ListRead],
        limit: int,
        now_us: int,
        open_: bool,
        grouped: bool,
    ) -> tuple[list[Hit], float | None]:
        params: dict[str, object] = {
            "tenant_id": self.tenant_id,
            "now_us": now_us,
            "limit": limit,
            "kth": limit - 1,
            "open": int(open_),
        }
        unseen = 0.0
        read = [t for t in stats if t.stem in reads]
        for i, t in enumerate(read):
            r = reads[t.stem]
            params[f"e{i}"], params[f"d{i}"], params[f"ew{i}"] = t.stem, r.depth, t.idf
            params[f"c{i}"] = lexical.contribution(t, r)
        for j, t in enumerate(stats):
            params[f"t{j}"], params[f"w{j}"] = t.stem, t.idf
            unseen += lexical.contribution(t, reads.get(t.stem))
        params["unseen"] = unseen
        rows = self.conn.execute(_ranked_statement(len(read), len(stats), grouped), params).all()
        floor = rows[0].floor if rows else None
        return [self._hit(r) for r in rows], (None if floor is None or floor < 0 else floor)

    def _hit(self, r) -> Hit:  # type: ignore[no-untyped-def]
        rng = passages.range_of(r.entry)
        if rng is None:
            return Hit(*r[:6])
        messages = Body.from_raw(SourceKind(r.kind), r.raw).messages
        text = passages.render(messages, rng, self.window)
        return Hit(r.pk, r.source_id, r.revision, r.score, text, r.save_intent, rng)

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
