"""The postings of large tenants held in memory, so that their top k is scored with numpy.

A tenant with many index entries (`search.held_min_entries`) has its postings held per word,
loaded the first time a query uses the word: for each entry holding the word, its slot and
its impact. Every entry has one slot per version (what it holds and whether it is eligible,
ignoring time); `usable` says which slots are the current version of an eligible entry. A
search scores every usable entry holding a query word exactly, word by word in the words'
order (so the sums are those every other path computes), and the caller checks the best
entries' sources against the tenant and the whole eligibility predicate in SQL
(`storage.search_index`).

What is held is brought up to date inside the caller's transaction at every use: the entries
written, or whose eligibility changed, since (by any process) are found by their stamp (the
tenant's count of index changes, `tenant_state.index_stamp`, as the change left it; kept in
`search_postings.stamp`) and get a new slot (the old one is no longer usable). An entry
deleted (revocation, erasure) leaves no stamp: its slot is dropped when a check finds its
source gone, or not eligible for a reason that time does not change (`drop`). A word that
no entry holds any more (an erasure or purge took its last entry) is forgotten by the
process that removed it as the change commits (`forget_words`); the change also stamps
`tenant_state.words_removed_at`, so every other process drops the words its index no longer
has at its next use of the tenant, or at its minute's `sweep`. A tenant that shrinks below
`min_entries` is no longer held. Tenants held are least recently used first out beyond
`max_postings`. Nothing held is text: entry keys, numbers, and words the tenant's index
holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, literal_column, select

from runtime_svc.domain.lexical import TermStats
from runtime_svc.domain.passages import SHIFT
from runtime_svc.storage.models import SearchPosting, SearchTerm, TenantState
from runtime_svc.storage.read_rows import driver_rows

if TYPE_CHECKING:
    import numpy as np

postings = SearchPosting.__table__
_state = TenantState.__table__
_terms = SearchTerm.__table__
# The row marking an entry (the empty word), as a literal: the stamp's partial index is used
# only when the statement says `term = ''` itself.
ENTRY = literal_column("''")
REBUILD_SHARE = 0.25  # more changed (or dead) slots than this share: load the tenant afresh
MERGE_AT = 4096  # appended postings of a word merged into its arrays beyond this many
PRELOAD_MAX = 50_000  # a tenant with at most this many entries has every word loaded at once
SAMPLE_MAX = 50_000  # the longest shortest list worth pruning with (see `Held.pruned`)
# Up to this many slots and query-word postings together, scoring every slot (one array of
# the tenant's slots, each word's list added in once) costs less than pruning, whose exact
# scores look each candidate up in every list: at 20k passages (about 35k of both) Search
# took 0.70 ms in process instead of 0.89 (p99 0.89 against 1.97), at 100k passages
# (about 136k) 0.95 against 1.01 (p99 1.37 against 4.05). At 1M memories of everyday
# words (millions of postings a query) pruning is what keeps search within its targets.
DENSE_MAX = 1 << 18
# Scores added in another order may differ in their last bits: comparisons leave this room.
SLACK = 1e-9

_LAST_STAMP = select(_state.c.index_stamp, _state.c.words_removed_at).where(
    _state.c.tenant_id == bindparam("tenant_id")
)
_WORDS = select(_terms.c.term).where(_terms.c.tenant_id == bindparam("tenant_id"))
_ENTRIES = select(postings.c.pk, postings.c.eligible).where(
    postings.c.tenant_id == bindparam("tenant_id"), postings.c.term == ENTRY
)
_CHANGED = select(postings.c.pk, postings.c.eligible).where(
    postings.c.tenant_id == bindparam("tenant_id"),
    postings.c.term == ENTRY,
    postings.c.stamp > bindparam("after"),
)
_ALL_WORDS = (
    select(postings.c.term, postings.c.pk, postings.c.impact)
    .where(postings.c.tenant_id == bindparam("tenant_id"), postings.c.term != ENTRY)
    .order_by(postings.c.term)
)
_WORDS_BY_DOCS = (
    select(_terms.c.term)
    .where(_terms.c.tenant_id == bindparam("tenant_id"), _terms.c.term != ENTRY)
    .order_by(_terms.c.docs.desc())
)
_WORD = select(postings.c.pk, postings.c.impact).where(
    postings.c.tenant_id == bindparam("tenant_id"), postings.c.term == bindparam("term")
)
_POSTINGS_OF = select(postings.c.pk, postings.c.term, postings.c.impact).where(
    postings.c.pk.in_(bindparam("keys", expanding=True)),
    # Through the primary key (entry, word), not the tenant's index.
    postings.c.tenant_id.concat("") == bindparam("tenant_id"),
)


@dataclass
class _Word:
    """A word's postings: slots in increasing order (new slots are always the largest, so
    appending keeps the order), with their impacts."""

    slots: np.ndarray
    impacts: np.ndarray
    more: list[tuple[int, float]] = field(default_factory=list)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        if self.more:
            self.more.sort()
            slots, impacts = zip(*self.more, strict=True)
            self.slots = np.concatenate([self.slots, np.asarray(slots, np.int64)])
            self.impacts = np.concatenate([self.impacts, np.asarray(impacts, np.float64)])
            self.more = []
        return self.slots, self.impacts

    def impacts_of(self, slots: np.ndarray) -> np.ndarray:
        """The impact of each of some slots (sorted), 0.0 where the word is not held."""
        import numpy as np

        mine, impacts = self.arrays()
        if not len(mine):
            return np.zeros(len(slots), np.float64)
        i = np.minimum(np.searchsorted(mine, slots), len(mine) - 1)
        return np.where(mine[i] == slots, impacts[i], 0.0)


class Held:
    """One tenant's postings in memory (use under its lock, see `Mirrors.hold`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.after = -1  # the tenant's index stamp caught up to (-1: nothing loaded)
        self.words: dict[str, _Word] = {}
        self._keys: np.ndarray | None = None  # entry key of each slot
        self._usable: np.ndarray | None = None
        self._n = 0  # slots in use
        self._base: np.ndarray | None = None  # keys of the first slots, sorted (slot = index)
        self._moved: dict[int, int] = {}  # key -> slot, for keys whose slot is not the base one
        self._moved_arrays: tuple[np.ndarray, np.ndarray] | None = None
        self._dead = 0
        self.seen = 0  # the tenant's index stamp in the current caller's transaction
        self._size = 0

    @property
    def postings(self) -> int:
        """How many postings (and slots) are held: what memory they take, at about 16 bytes
        each (counted when the tenant or a word is loaded; appended ones are few)."""
        return self._size

    def _count(self) -> None:
        self._size = sum(len(w.slots) for w in self.words.values()) + self._n

    # -- keeping up with the database ------------------------------------------------------

    def catch_up(self, conn: Connection, tenant_id: str) -> None:
        """Brings what is held up to the caller's transaction: the entries stamped since."""
        params = {"tenant_id": tenant_id}
        self.seen, words_removed_at = next(iter(driver_rows(conn, _LAST_STAMP, params)), (0, 0))
        if self.after < 0 or self._dead > REBUILD_SHARE * max(self._n, 1):
            self._load(conn, tenant_id)
            return
        if self.seen <= self.after:
            return
        if words_removed_at > self.after:
            self._forget_removed_words(conn, tenant_id)
        changed = driver_rows(conn, _CHANGED, params | {"after": self.after})
        if len(changed) > REBUILD_SHARE * max(self._n, 1) + 64:
            self._load(conn, tenant_id)
            return
        slot_of: dict[int, int] = {}
        for key, eligible in changed:
            old = self._slot(key)
            if old is not None and self._usable is not None:
                self._usable[old] = False
                self._dead += 1
            slot_of[key] = self._new_slot(key, bool(eligible))
        if self.words and slot_of:
            rows = conn.execute(_POSTINGS_OF, params | {"keys": list(slot_of)}).all()
            for key, term, impact in rows:
                word = self.words.get(term)
                if word is not None:
                    word.more.append((slot_of[key], impact))
                    if len(word.more) > MERGE_AT:
                        word.arrays()
        self._moved_arrays = None
        self.after = self.seen

    def _load(self, conn: Connection, tenant_id: str) -> None:
        import numpy as np

        rows = driver_rows(conn, _ENTRIES, {"tenant_id": tenant_id})
        keys = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        eligible = np.fromiter((r[1] for r in rows), np.bool_, len(rows))
        order = np.argsort(keys, kind="stable")
        self._base = keys[order]
        self._keys = self._base.copy()
        self._usable = eligible[order]
        self._n = len(rows)
        self._moved, self._moved_arrays, self._dead = {}, None, 0
        held_before, self.words = list(self.words), {}
        self.after = self.seen
        if self._n <= PRELOAD_MAX:
            self._load_words(conn, tenant_id)
        else:  # loaded afresh (many changed): the words held stay held, if the index has them
            for term in held_before:
                if not len(self._word(conn, tenant_id, term).slots):
                    del self.words[term]
        self._count()

    def forget_words(self, words: Sequence[str]) -> None:
        """Words the tenant's index no longer has (use under the lock)."""
        for word in words:
            self.words.pop(word, None)
        self._count()

    def _forget_removed_words(self, conn: Connection, tenant_id: str) -> None:
        """Drops the words held that the tenant's index no longer has."""
        if not self.words:
            return
        kept = {row[0] for row in driver_rows(conn, _WORDS, {"tenant_id": tenant_id})}
        self.forget_words([t for t in self.words if t not in kept])

    def _load_words(self, conn: Connection, tenant_id: str) -> None:
        """Every word's list at once (a tenant of moderate size): no search then pays for a
        word's first use."""
        import numpy as np

        rows = driver_rows(conn, _ALL_WORDS, {"tenant_id": tenant_id})
        start = 0
        for end in range(1, len(rows) + 1):
            if end < len(rows) and rows[end][0] == rows[start][0]:
                continue
            part = rows[start:end]
            keys = np.fromiter((r[1] for r in part), np.int64, len(part))
            impacts = np.fromiter((r[2] for r in part), np.float64, len(part))
            self.words[part[0][0]] = self._word_of(keys, impacts)
            start = end

    def _word_of(self, keys: np.ndarray, impacts: np.ndarray) -> _Word:
        import numpy as np

        slots = self._slots_of(keys)
        known = slots >= 0  # an entry written since the catch-up comes with the next one
        order = np.argsort(slots[known], kind="stable")
        return _Word(slots[known][order], impacts[known][order])

    def _slot(self, key: int) -> int | None:
        moved = self._moved.get(key)
        if moved is not None:
            return moved
        base = self._base
        if base is None or not len(base):
            return None
        import numpy as np

        i = int(np.searchsorted(base, key))
        return i if i < len(base) and int(base[i]) == key else None

    def _new_slot(self, key: int, usable: bool) -> int:
        import numpy as np

        assert self._keys is not None and self._usable is not None
        if self._n == len(self._keys):
            grow = max(1024, self._n)
            self._keys = np.concatenate([self._keys, np.zeros(grow, np.int64)])
            self._usable = np.concatenate([self._usable, np.zeros(grow, np.bool_)])
        slot = self._n
        self._keys[slot] = key
        self._usable[slot] = usable
        self._n += 1
        self._moved[key] = slot
        return slot

    def _slots_of(self, keys: np.ndarray) -> np.ndarray:
        """The current slot of each key (-1: a key not held, written after the catch-up)."""
        import numpy as np

        slots = np.full(len(keys), -1, np.int64)
        base = self._base
        if base is not None and len(base):
            i = np.minimum(np.searchsorted(base, keys), len(base) - 1)
            hit = base[i] == keys
            slots[hit] = i[hit]
        if self._moved:
            if self._moved_arrays is None:
                mk = np.fromiter(self._moved.keys(), np.int64, len(self._moved))
                ms = np.fromiter(self._moved.values(), np.int64, len(self._moved))
                order = np.argsort(mk)
                self._moved_arrays = (mk[order], ms[order])
            mk, ms = self._moved_arrays
            j = np.minimum(np.searchsorted(mk, keys), len(mk) - 1)
            hit = mk[j] == keys
            slots[hit] = ms[j[hit]]
        return slots

    def _word(self, conn: Connection, tenant_id: str, term: str) -> _Word:
        word = self.words.get(term)
        if word is None:
            import numpy as np

            rows = driver_rows(conn, _WORD, {"tenant_id": tenant_id, "term": term})
            keys = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            impacts = np.fromiter((r[1] for r in rows), np.float64, len(rows))
            word = self.words[term] = self._word_of(keys, impacts)
            self._size += len(word.slots)
        return word

    # -- scoring -----------------------------------------------------------------------------

    def scores(
        self, conn: Connection, tenant_id: str, stats: Sequence[TermStats], want: int
    ) -> tuple[np.ndarray, float]:
        """Every slot's exact score for the query words (0 for an unusable slot or one
        holding none of them); and a score that at least `want` slots reach (0.0 when
        fewer score): the `want`-th best among the slots of the shortest word list that
        has that many usable ones (the rarest words' lists are short), so that the best
        are found by one comparison rather than a selection over every slot."""
        import numpy as np

        assert self._usable is not None
        usable = self._usable[: self._n]
        total = np.zeros(self._n, np.float64)
        lists = []
        for t in stats:
            slots, impacts = self._word(conn, tenant_id, t.stem).arrays()
            total[slots] += impacts * t.idf
            lists.append(slots)
        total *= usable
        floor = 0.0
        for slots in sorted(lists, key=len):
            if len(slots) >= want:
                sample = total[slots]
                if np.count_nonzero(sample) >= want:
                    floor = float(np.partition(sample, len(sample) - want)[len(sample) - want])
                    break
        return total, floor

    def pruned(
        self, conn: Connection, tenant_id: str, stats: Sequence[TermStats], limit: int
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """MaxScore over the held lists: the usable slots that can score among the best
        `limit` sources, with their exact scores (None when the words cannot be told apart
        so, or when the slots and lists are few enough, `DENSE_MAX`, that scoring every slot
        costs less: score every slot instead).

        The slots of the shortest list (`SAMPLE_MAX` at most) are scored exactly; the
        `limit`-th best source among them gives a score the result reaches if those sources
        are eligible (the caller checks that none it met was refused, else it scores every
        slot). Words whose upper bounds add up to less than that, the least weighty first,
        cannot lift a memory holding none of the others into the result: only the slots of
        the other words' lists are candidates, and only those whose score from those words
        plus the least weighty ones' bounds reaches it."""
        import numpy as np

        assert self._usable is not None and self._keys is not None
        words = [self._word(conn, tenant_id, t.stem) for t in stats]
        lists = [w.arrays()[0] for w in words]
        shortest = min(lists, key=len)
        if len(shortest) > SAMPLE_MAX or len(stats) < 2:
            return None
        if self._n + sum(len(slots) for slots in lists) <= DENSE_MAX:
            return None
        sample = shortest[self._usable[shortest]]
        floor = _kth_source(self._keys[sample], self.exact(words, stats, sample), limit)
        if floor <= 0.0:
            return None
        # `stats` go smallest upper bound first: the longest prefix whose bounds add up to
        # less than the floor is what cannot make a memory on its own.
        bound, cut = 0.0, 0
        while cut < len(stats) and bound + stats[cut].upper_bound < floor - SLACK:
            bound += stats[cut].upper_bound
            cut += 1
        if cut == 0:
            return None
        partial = np.zeros(self._n, np.float64)
        for t, slots in zip(stats[cut:], lists[cut:], strict=True):
            partial[slots] += self.words[t.stem].impacts * t.idf
        # Each list's slots that can reach the floor (few), then each once.
        reaching = [slots[partial[slots] + bound >= floor - SLACK] for slots in lists[cut:]]
        candidates = np.unique(np.concatenate(reaching))
        candidates = candidates[self._usable[candidates]]
        return candidates, self.exact(words, stats, candidates)

    def exact(self, words: list[_Word], stats: Sequence[TermStats], slots: np.ndarray):  # type: ignore[no-untyped-def]
        """The exact scores of some slots (sorted): each word's impact times its idf, added
        in the words' order (as every path adds them)."""
        total = None
        for w, t in zip(words, stats, strict=True):
            part = w.impacts_of(slots) * t.idf
            total = part if total is None else total + part
        return total

    def keys(self, slots: np.ndarray) -> np.ndarray:
        assert self._keys is not None
        return self._keys[slots]

    def drop(self, slots: Sequence[int]) -> None:
        """Slots whose source the caller found gone, or not eligible for a reason time does
        not change: their entry was deleted since it was read (a later change would have
        stamped it), so they are never proposed again. Only when the caller's transaction
        sees all that is held (an older snapshot may not see an entry held already)."""
        assert self._usable is not None
        if self.seen < self.after:
            return
        for s in slots:
            if self._usable[s]:
                self._usable[s] = False
                self._dead += 1


def _kth_source(keys: np.ndarray, scores: np.ndarray, k: int) -> float:
    """The `k`-th best score among distinct sources (each by its best entry); 0.0 when
    fewer sources score."""
    import numpy as np

    n = min(64 * k, len(scores))
    top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    seen: set[int] = set()
    for i in top:
        if scores[i] <= 0.0:
            break
        seen.add(int(keys[i]) >> SHIFT)
        if len(seen) == k:
            return float(scores[i])
    return 0.0


class Mirrors:
    """The tenants held by this process."""

    def __init__(self, min_entries: int, max_postings: int) -> None:
        self.min_entries = min_entries
        self._max = max_postings
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, tenant_id: str) -> Held:
        with self._lock:
            held = self._held.get(tenant_id)
            if held is None:
                held = self._held[tenant_id] = Held()
            self._held.move_to_end(tenant_id)
            total = sum(h.postings for h in self._held.values())
            while total > self._max and len(self._held) > 1:
                _, gone = self._held.popitem(last=False)
                total -= gone.postings
            return held

    @contextmanager
    def hold(self, conn: Connection, tenant_id: str) -> Iterator[Held]:
        """The tenant's postings, up to date as of the caller's transaction, under their
        lock."""
        held = self._entry(tenant_id)
        with held.lock:
            held.catch_up(conn, tenant_id)
            yield held

    def warm(self, connect: Callable[[], Any], tenants: Sequence[tuple[str, int]]) -> int:
        """Holds the largest tenants' postings, every word of each (the commonest first),
        within `max_postings`: a runtime does this before it serves, so that no search
        pays for loading a word. `tenants`: (tenant, index entries). Returns the postings
        held."""
        held_in_all = 0
        for tenant_id, entries in sorted(tenants, key=lambda t: -t[1]):
            if entries < self.min_entries or held_in_all + entries > self._max:
                continue
            held = self._entry(tenant_id)
            with connect() as conn, conn.begin(), held.lock:
                held.catch_up(conn, tenant_id)
                for term in driver_rows(conn, _WORDS_BY_DOCS, {"tenant_id": tenant_id}):
                    if held.postings + held_in_all > self._max:
                        break
                    held._word(conn, tenant_id, term[0])
                held_in_all += held.postings
        return held_in_all

    def forget(self, tenant_id: str) -> None:
        with self._lock:
            self._held.pop(tenant_id, None)

    def holds(self, tenant_id: str) -> bool:
        return tenant_id in self._held

    def forget_words(self, tenant_id: str, words: Sequence[str]) -> None:
        """Words a committed change removed from the tenant's index."""
        with self._lock:
            held = self._held.get(tenant_id)
        if held is None:
            return
        with held.lock:
            held.forget_words(words)

    def sweep(self, connect: Callable[[], Any]) -> None:
        """Brings every tenant held up to date (each in a read transaction of its own), so
        that words removed from an index by another process leave this one's memory even
        when the tenant is not searched here again."""
        with self._lock:
            tenants = list(self._held.items())
        for tenant_id, held in tenants:
            with connect() as conn, conn.begin(), held.lock:
                held.catch_up(conn, tenant_id)
