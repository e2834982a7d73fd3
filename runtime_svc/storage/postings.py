"""The search index as stored: postings and per-tenant word counts (the same tables on SQLite
and PostgreSQL). Ranking reads them in `runtime_svc.retrieval`; this module writes them.

`search_postings` holds one row per content word of an indexed entry (its impact, see
`runtime_svc.domain.lexical`) plus one row with the empty word that marks the entry itself,
and whether the entry's source is eligible (ignoring time-dependent rules). `search_terms`
holds, per tenant and word, how many of the tenant's entries hold it (`docs`: a word no
entry holds leaves no row), how many of its *eligible* entries hold it (`eligible_docs`:
the ranking statistics, so a cold or otherwise ineligible source moves no other source's
score) and the largest impact it had (a bound, never lowered). The empty word's row counts
the tenant's entries. Every change of them goes through `Postings` (called by the source
writer, the lifecycle's one write path), in the transaction of the change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection, Table, bindparam, delete, select, text, update

from runtime_svc.domain import entry_keys, lexical, passages
from runtime_svc.domain.entry_keys import EntryKey
from runtime_svc.domain.passages import Range
from runtime_svc.storage import compiled, eligibility_sql, term_counts
from runtime_svc.storage.index_changes import Flagged, IndexChange, Written
from runtime_svc.storage.models import SearchPosting
from runtime_svc.storage.source_rows import sources
from runtime_svc.storage.term_counts import Count

postings = cast(Table, SearchPosting.__table__)
ENTRY = ""  # the word of the row that marks an entry (and counts a tenant's entries)


@dataclass(frozen=True)
class Indexable:
    """A whole-text entry to write (bulk loads): its source, text and eligibility."""

    pk: int
    text: str
    eligible: bool


@dataclass(frozen=True)
class _Entry:
    key: EntryKey
    text: str


_INSERT = postings.insert()
_COLUMNS = ("pk", "term", "tenant_id", "eligible", "impact", "stamp")
# Every entry of one source (`lo`..`hi`, its key range) in the tenant. The tenant is compared
# through an expression that no index serves: given the plain column, SQLite reads the
# tenant's whole (tenant, word) index, every entry of the tenant, instead of the key range.
_OWN_ENTRIES = (
    postings.c.pk.between(bindparam("lo"), bindparam("hi")),
    (postings.c.tenant_id + "") == bindparam("tenant"),
)
_HAS = select(postings.c.pk).where(*_OWN_ENTRIES, postings.c.term == ENTRY).limit(1)
_FLAGS_OF = select(postings.c.pk, postings.c.term, postings.c.eligible).where(*_OWN_ENTRIES)
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
_KEYS_OF = select(postings.c.pk).where(*_OWN_ENTRIES, postings.c.term == ENTRY)
_WORDS_OF = select(postings.c.term).where(*_OWN_ENTRIES, postings.c.term != ENTRY).distinct()

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
    INSERT INTO search_terms AS current (tenant_id, term, docs, eligible_docs, max_impact)
    SELECT :tenant_id, c.term, c.docs, c.eligible_docs, c.max_impact
    FROM unnest(
        CAST(:count_term AS TEXT[]), CAST(:count_docs AS BIGINT[]),
        CAST(:count_eligible AS BIGINT[]), CAST(:count_max AS DOUBLE PRECISION[])
    ) WITH ORDINALITY AS c(term, docs, eligible_docs, max_impact, n)
    ORDER BY c.n
    ON CONFLICT (tenant_id, term) DO UPDATE SET
        docs = current.docs + excluded.docs,
        eligible_docs = current.eligible_docs + excluded.eligible_docs,
        max_impact = GREATEST(current.max_impact, excluded.max_impact)
    """
)


class Postings:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        *,
        stamp: Callable[[], int] | None = None,
        words_removed: Callable[[list[str]], None] | None = None,
        changed: Callable[[IndexChange], None] | None = None,
    ) -> None:
        """`stamp`: gives each change of an entry the tenant's next index stamp (kept on the
        entry's row: postings held in memory catch up by it); `words_removed`: told of the
        words a change removes from the index (postings held in memory then forget them);
        `changed`: told of each stamped change (`storage.index_changes`)."""
        self.conn = conn
        self.tenant_id = tenant_id
        self._stamp = stamp
        self._words_removed = words_removed
        self._changed = changed

    def _own(self, pk: int) -> dict[str, object]:
        keys = entry_keys.key_range(pk)
        return {"lo": keys.first, "hi": keys.last, "tenant": self.tenant_id}

    def _next_stamp(self) -> int | None:
        return self._stamp() if self._stamp is not None else None

    # -- writes: the entries of one source ---------------------------------------------------

    def put(
        self, pk: int, body: str, *, eligible: bool, revision: int, revision_recorded: bool = False
    ) -> None:
        """The entry of one source. `revision_recorded`: its row, written in the same
        transaction, already records `revision` (a new source, see the source writer)."""
        entry = _Entry(entry_keys.entry_key(pk), body)
        self._put([(pk, [entry], eligible)], revision, revision_recorded)

    def put_many(self, rows: Sequence[Indexable], revision: int = 1) -> None:
        """Whole-text entries of many sources (bulk loads), derived from `revision`."""
        self._put(
            [(r.pk, [_Entry(entry_keys.entry_key(r.pk), r.text)], r.eligible) for r in rows],
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
        keyed = [_Entry(entry_keys.entry_key(pk, p.range), p.text) for p in entries]
        self._put([(pk, keyed, eligible)], revision, revision_recorded)

    def _put(
        self,
        rows: list[tuple[int, list[_Entry], bool]],
        revision: int,
        revision_recorded: bool = False,
    ) -> None:
        if not rows:
            return
        if not revision_recorded:
            self._set_indexed_revision([pk for pk, _, _ in rows], revision)
        # Rows as tuples of `_COLUMNS`, and each word's counts: made once, read by both.
        tenant, values = self.tenant_id, []
        written: list[tuple[int, bool, Mapping[str, float]]] = []
        docs: dict[str, int] = {}
        live: dict[str, int] = {}
        best: dict[str, float] = {}
        stamp = self._next_stamp()
        for _, entries, eligible in rows:
            flag = int(eligible)
            for entry in entries:
                analysed = lexical.analyse(entry.text)
                key, impacts = entry.key, analysed.impacts
                values.append((key, ENTRY, tenant, flag, float(analysed.length), stamp))
                values += [(key, term, tenant, flag, w, None) for term, w in impacts.items()]
                written.append((key, eligible, impacts))
                for term, weight in ((ENTRY, float(analysed.length)), *impacts.items()):
                    docs[term] = docs.get(term, 0) + 1
                    live[term] = live.get(term, 0) + flag
                    if weight > best.get(term, 0.0):
                        best[term] = weight
        counts = [(t, n, live[t], best.get(t, 0.0)) for t, n in sorted(docs.items())]
        if self._changed is not None and stamp is not None:
            self._changed(Written(stamp, written))
        if self.conn.dialect.name == "postgresql":  # one round trip for both tables
            self.conn.execute(
                _PG_PUT,
                {
                    "pk": [v[0] for v in values],
                    "term": [v[1] for v in values],
                    "eligible": [v[3] for v in values],
                    "impact": [v[4] for v in values],
                    "stamp": stamp,
                    "tenant_id": self.tenant_id,
                    "count_term": [c[0] for c in counts],
                    "count_docs": [c[1] for c in counts],
                    "count_eligible": [c[2] for c in counts],
                    "count_max": [c[3] for c in counts],
                },
            )
            return
        compiled.execute_rows(self.conn, _INSERT, _COLUMNS, values)
        term_counts.add_rows(self.conn, self.tenant_id, counts)

    def remove(self, pk: int) -> bool:
        """Deletes the source's entries (its passages); whether there were any."""
        own = self._own(pk)
        docs: dict[str, int] = {}
        live: dict[str, int] = {}
        for _, term, eligible in self.conn.execute(_FLAGS_OF, own):
            docs[term] = docs.get(term, 0) - 1
            live[term] = live.get(term, 0) - int(bool(eligible))
        self._set_indexed_revision([pk], 0)
        if not docs:
            return False
        self.conn.execute(_DELETE_ENTRIES, own)
        self._next_stamp()  # the tenant's index changed: memory that follows it checks it
        changes = [Count(t, n, live[t], 0.0) for t, n in docs.items()]
        term_counts.add(self.conn, self.tenant_id, changes)
        # A word no entry holds any more leaves no trace (erasure purges what it said), in
        # the database nor in any runtime's memory (`words_removed`).
        removed = term_counts.drop_unheld(self.conn, self.tenant_id, list(docs))
        if removed and self._words_removed is not None:
            self._words_removed(removed)
        return True

    def set_eligible(self, pk: int, eligible: bool, revision: int | None = None) -> None:
        """The source's entries follow its eligibility (ignoring time), and so do the
        tenant's ranking statistics: each word of an entry that changes is counted among
        the eligible entries, or no longer."""
        own = self._own(pk)
        delta = 1 if eligible else -1
        live: dict[str, int] = {}
        rows = self.conn.execute(_FLAGS_OF, own).all()
        for _, term, flag in rows:
            if bool(flag) != eligible:
                live[term] = live.get(term, 0) + delta
        stamp = self._next_stamp()
        self.conn.execute(_SET_ELIGIBLE, {**own, "flag": int(eligible), "stamp": stamp})
        if self._changed is not None and stamp is not None:
            self._changed(Flagged(stamp, [k for k, term, _ in rows if term == ENTRY], eligible))
        if live:
            term_counts.add(
                self.conn, self.tenant_id, [Count(t, 0, n, 0.0) for t, n in live.items()]
            )
        if revision is not None:
            self._set_indexed_revision([pk], revision)

    def _set_indexed_revision(self, pks: list[int], revision: int) -> None:
        """The source row's record of which revision its index entry was derived from (0:
        none). Written here only (or with the row of a source created with its entry, by the
        source writer): the index is the one truth of what is indexed."""
        if pks:
            compiled.execute_many(
                self.conn,
                _SET_INDEXED_REVISION,
                [{"source_pk": pk, "tenant": self.tenant_id, "indexed": revision} for pk in pks],
            )

    # -- reads of one source's entries (readback) --------------------------------------------

    def has(self, pk: int) -> bool:
        return self.conn.execute(_HAS, self._own(pk)).first() is not None

    def passages(self, pk: int) -> list[Range]:
        """The message ranges of the source's passage entries (none for a whole-text one)."""
        found = (
            entry_keys.range_of(k) for k in self.conn.execute(_KEYS_OF, self._own(pk)).scalars()
        )
        return sorted((r for r in found if r is not None), key=lambda r: (r.end, r.start))

    def words(self, pk: int) -> list[str]:
        """The words the entry holds (for readback)."""
        return sorted(self.conn.execute(_WORDS_OF, self._own(pk)).scalars())

    def retrievable(self, pk: int, now_us: int) -> bool:
        """Whether a search whose words match this entry would return it: the ranking's own
        filters (the entry's eligibility, the tenant, the whole predicate) on it."""
        stmt = (
            select(sources.c.pk)
            .select_from(postings.join(sources, sources.c.pk == pk))
            .where(
                *_OWN_ENTRIES,
                postings.c.term == ENTRY,
                postings.c.eligible == 1,
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
        )
        return self.conn.execute(stmt, self._own(pk)).first() is not None
