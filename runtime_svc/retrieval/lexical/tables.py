"""The ranker over postings in the index tables (a tenant below `search.held_min_entries`, or
any tenant when nothing is held in memory): a top k that reads only the postings that can
still matter.

Each word's eligible postings are read best impact first, and only as deep as needed: words
with few postings whole at once, then the word whose bound weighs most per posting
(`lexical.next_read`). The postings read (plain driver rows: thousands of them cost little)
give every entry reached an upper bound; in the order of that bound, entries are scored
exactly (their impacts for words whose postings did not tell are looked up by entry and
word) until the next bound is below the k-th score, and offered to the eligible-take loop
(`retrieval.take`) best first; a source refused there lowers the k-th score and the scoring
goes on. The k-th score then certifies the result (`lexical.certify`) or the reading goes
deeper. Only a word in more than `budget` of the tenant's eligible entries can stop the
search short of certainty, and then what it may miss is bounded (`Certificate.bound`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Select, bindparam, select

from runtime_svc.domain import entry_keys, lexical
from runtime_svc.domain.lexical import Certificate, ListRead, TermStats
from runtime_svc.retrieval import take
from runtime_svc.retrieval.lexical.statistics import QueryStats
from runtime_svc.retrieval.scores import SLACK, kth_score
from runtime_svc.retrieval.source_checks import Sources
from runtime_svc.storage.postings import postings
from runtime_svc.storage.read_rows import driver_rows, one_of
from runtime_svc.storage.shown_sources import ShownSource

DEFAULT_BUDGET = 20_000
FIRST_DEPTH = 128
GROWTH = 4


def _list_statement(dialect: str) -> Select[Any]:
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


def _impacts_statement(dialect: str) -> Select[Any]:
    """The impacts some entries have for a word (exact scores of entries reached through
    other words' postings)."""
    return select(postings.c.pk, postings.c.impact).where(
        one_of(postings.c.pk, "keys", dialect),
        postings.c.term == bindparam("term"),
        # An expression, not the column: the lookups go through the primary key (entry,
        # word), never down the word's whole list in the impact index.
        postings.c.tenant_id.concat("") == bindparam("tenant_id"),
    )


@dataclass
class _Read:
    """What the search read of the words' postings so far."""

    conn: Connection
    tenant_id: str
    stats: QueryStats
    reads: dict[str, ListRead] = field(default_factory=dict)
    lists: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def read(self, term: TermStats, depth: int) -> None:
        """The word's first `depth` eligible postings (entry key, impact), best first."""
        params = {"tenant_id": self.tenant_id, "term": term.stem, "depth": depth}
        rows = driver_rows(self.conn, _list_statement, params)
        self.lists[term.stem] = rows
        self.reads[term.stem] = ListRead(depth, len(rows) < depth, rows[-1][1] if rows else 0.0)

    def impacts(self, keys: list[int], stem: str) -> list[tuple[int, float]]:
        params = {"keys": keys, "term": stem, "tenant_id": self.tenant_id}
        return driver_rows(self.conn, _impacts_statement, params)


def search(
    conn: Connection,
    tenant_id: str,
    stats: QueryStats,
    limit: int,
    now_us: int,
    *,
    budget: int,
    grouped: bool,
    shown: dict[int, ShownSource] | None = None,
) -> tuple[list[take.Taken], Certificate]:
    """The best `limit` eligible sources (each by its best entry; with `grouped` off, the
    best entries), and what the result is certified to be: exact, or (only when a word's
    eligible postings outnumber `budget`) missing nothing that scores above its bound.
    `shown`: what the transaction's checks read of sources, by pk (`source_checks`)."""
    terms = stats.by_bound
    if not terms:
        return [], Certificate(True, 0.0)
    got = _Read(conn, tenant_id, stats)
    by_stem = {t.stem: t for t in terms}
    for t in terms:  # words with few postings are read to their end at once
        if t.docs <= FIRST_DEPTH:
            got.read(t, FIRST_DEPTH)
    checker = Sources(conn, tenant_id, now_us, shown)
    taken: list[take.Taken] = []
    kth: float | None = None
    cert = Certificate(False, 0.0)
    allowed: int | None = budget
    ranked = False
    while True:
        if ranked or not got.reads:
            stepped = False
            while True:
                step = lexical.next_read(
                    terms, got.reads, first=FIRST_DEPTH, growth=GROWTH, budget=allowed
                )
                if step is None:
                    break
                got.read(by_stem[step[0]], step[1])
                stepped = True
                if kth is None or kth > lexical.unreached_bound(terms, got.reads):
                    break
            if not stepped:
                if kth is None and allowed is not None:
                    allowed = None  # never fewer than `limit` while eligible matches are unread
                    continue
                return taken, cert
        ranked = True
        result = take.take(_Ranker(got, limit, grouped), checker, limit, grouped, limit)
        taken, kth = result.taken, result.kth(limit)
        cert = lexical.certify(terms, got.reads, kth, None)
        if cert.exact:
            return taken, cert


class _Ranker:
    """One ranking over the postings read so far: every entry reached gets an upper bound
    (its impacts seen, plus each other word's `lexical.contribution`); entries are scored
    exactly in order of that bound while it reaches the k-th score (of the sources not
    refused), and offered in rounds, best first."""

    def __init__(self, got: _Read, limit: int, grouped: bool) -> None:
        self._got, self._limit, self._grouped = got, limit, grouped
        terms = got.stats.by_bound
        self._contrib = [lexical.contribution(t, got.reads.get(t.stem)) for t in terms]
        unseen = sum(self._contrib)
        self._known: dict[int, list[float | None]] = {}
        bound: dict[int, float] = {}
        for i, t in enumerate(terms):
            rows = got.lists.get(t.stem) if t.stem in got.reads else None
            if not rows:
                continue
            w, c = t.idf, self._contrib[i]
            for key, impact in rows:
                known = self._known.get(key)
                if known is None:
                    known = self._known[key] = [None] * len(terms)
                    bound[key] = unseen
                known[i] = impact
                bound[key] += impact * w - c
        self._bound = bound
        self._order = sorted(bound, key=bound.__getitem__, reverse=True)
        position = {t.stem: i for i, t in enumerate(terms)}
        self._sum_order = [position[t.stem] for t in got.stats.by_stem]

    def discard(self, refs: set[int]) -> None:
        pass  # nothing held

    def rounds(self, want: int, refused: set[int]) -> Iterator[take.Round]:
        bound, order = self._bound, self._order
        scores: dict[int, float] = {}
        offered: set[int] = set()
        dropped: dict[int, float] = {}  # entry: a tighter bound, below the floor it met
        pos, size = 0, max(2 * self._limit, 64)
        while True:
            # Score exactly, best bound first, every entry whose bound reaches the k-th score.
            floor = kth_score(
                list(scores),
                list(scores.values()),
                self._limit,
                grouped=self._grouped,
                excluded=refused,
            )
            chunk = [k for k, b in dropped.items() if floor is None or b + SLACK >= floor]
            for k in chunk:
                del dropped[k]
            while pos < len(order) and len(chunk) < size:
                if floor is not None and bound[order[pos]] + SLACK < floor:
                    break  # and the rest (a source refused later may lower the floor)
                chunk.append(order[pos])
                pos += 1
            if chunk:
                scored, below = self._exact(chunk, floor)
                scores |= scored
                dropped |= below
                size = min(size * 4, 4096)
                continue
            # Offer what can be in the top k (ties included: they go to the source id).
            contenders = sorted(
                (
                    (-v, k)
                    for k, v in scores.items()
                    if (floor is None or v >= floor)
                    and k not in offered
                    and entry_keys.source_pk(k) not in refused
                ),
            )
            if not contenders:
                return
            keys = [k for _, k in contenders]
            offered.update(keys)
            yield take.Round(
                [-s for s, _ in contenders], [entry_keys.source_pk(k) for k in keys], keys
            )

    def _exact(
        self, keys: list[int], floor: float | None
    ) -> tuple[dict[int, float], dict[int, float]]:
        """The exact scores of some entries, and a tighter bound for those that cannot reach
        `floor`. An entry's impact for a word its postings read do not tell is looked up, the
        word that can add most first; after each word, entries whose bound (impacts known,
        plus the contribution of each word still unknown) falls below `floor` are set aside
        with it."""
        terms, reads, contrib, known = (
            self._got.stats.by_bound,
            self._got.reads,
            self._contrib,
            self._known,
        )
        n = len(terms)
        weights = [t.idf for t in terms]
        open_ = [
            i
            for i, t in enumerate(terms)
            if not (t.stem in reads and reads[t.stem].exhausted)  # else: absent means 0
        ]
        open_.sort(key=lambda i: -contrib[i])
        alive = keys
        below: dict[int, float] = {}
        for step, i in enumerate(open_):
            missing = [k for k in alive if known[k][i] is None]
            if missing:
                for key, impact in self._got.impacts(missing, terms[i].stem):
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
                b = sum((got[j] or 0.0) * weights[j] for j in range(n) if got[j])
                b += sum(contrib[j] for j in later if got[j] is None)
                if b + SLACK < floor:
                    below[k] = b
                else:
                    kept.append(k)
            alive = kept
        out = {}
        for key in alive:
            got = known[key]
            total = 0.0
            for step, i in enumerate(self._sum_order):  # in the words' stem order
                part = (got[i] or 0.0) * weights[i]
                total = part if step == 0 else total + part
            out[key] = total
        return out, below
