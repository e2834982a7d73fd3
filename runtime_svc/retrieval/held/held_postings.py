"""A tenant's postings held in memory, so that its top k is scored with numpy
(`retrieval.held.held_rank`); the tenants held by a process are `retrieval.held.mirrors.Mirrors`.

A tenant with many index entries (`search.held_min_entries`) has its postings held per word,
loaded the first time a query uses the word: for each entry holding the word, its slot and
its impact. Every entry has one slot per version (what it holds and whether it is eligible,
ignoring time); `usable` says which slots are the current version of an eligible entry.

What is held is brought up to date inside the caller's transaction at every use: the entries
written, or whose eligibility changed, since (by any process) are found by their stamp (the
tenant's count of index changes, `tenant_state.index_stamp`, as the change left it; kept in
`search_postings.stamp`) and get a new slot (the old one is no longer usable). An entry
deleted (revocation, erasure) leaves no stamp: its slot is dropped when a check finds its
source gone, or not eligible for a reason that time does not change (`drop`). A word that
no entry holds any more (an erasure or purge took its last entry) is forgotten by the
process that removed it as the change commits (`forget_words`); the change also stamps
`tenant_state.words_removed_at`, so every other process drops the words its index no longer
has at its next use of the tenant, or at its minute's sweep. Nothing held is text: entry
keys, numbers, and words the tenant's index holds. The ranking statistics are not held:
each search reads them (`retrieval.lexical.statistics`), so every process ranks by the same counts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection

from runtime_svc.retrieval.held.held_sql import (
    ALL_WORDS,
    CHANGED,
    ENTRIES,
    LAST_STAMP,
    POSTINGS_OF,
    WORD,
    WORDS,
)
from runtime_svc.retrieval.held.held_words import Word
from runtime_svc.storage.index_changes import IndexChange
from runtime_svc.storage.read_rows import driver_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]
    Floats = NDArray[np.float64]
    Flags = NDArray[np.bool_]

REBUILD_SHARE = 0.25  # more changed (or dead) slots than this share: load the tenant afresh
MERGE_AT = 4096  # appended postings of a word merged into its arrays beyond this many
PRELOAD_MAX = 50_000  # a tenant with at most this many entries has every word loaded at once


class Held:
    """One tenant's postings in memory (use under its lock, see `Mirrors.hold`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.after = -1  # the tenant's index stamp caught up to (-1: nothing loaded)
        self.words: dict[str, Word] = {}
        self._keys: Ints | None = None  # entry key of each slot
        self._usable: Flags | None = None
        self._n = 0  # slots in use
        self._base: Ints | None = None  # keys of the first slots, sorted (slot = index)
        self._moved: dict[int, int] = {}  # key -> slot, for keys whose slot is not the base one
        self._moved_arrays: tuple[Ints, Ints] | None = None
        self._dead = 0
        self.seen = 0  # the tenant's index stamp in the current caller's transaction
        self._size = 0
        self.pending: dict[int, IndexChange] = {}  # changes told ahead of their turn
        self.caught_up = 0  # entries read back by catch-ups and loads (work a read paid)

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
        self.seen, words_removed_at = next(iter(driver_rows(conn, LAST_STAMP, params)), (0, 0))
        if self.after < 0 or self._dead > REBUILD_SHARE * max(self._n, 1):
            self._load(conn, tenant_id)
            return
        if self.seen <= self.after:
            return
        if words_removed_at > self.after:
            self._forget_removed_words(conn, tenant_id)
        changed = driver_rows(conn, CHANGED, params | {"after": self.after})
        if len(changed) > REBUILD_SHARE * max(self._n, 1) + 64:
            self._load(conn, tenant_id)
            return
        self.caught_up += len(changed)
        slot_of = {key: self.renew(key, bool(eligible)) for key, eligible in changed}
        if self.words and slot_of:
            rows = conn.execute(POSTINGS_OF, params | {"keys": list(slot_of)}).all()
            for key, term, impact in rows:
                self.add(slot_of[key], term, impact)
        self.after = self.seen

    def renew(self, key: int, eligible: bool) -> int:
        """A new slot for an entry written (again): its old slot, if any, is no longer
        usable. Its postings are then added to the words held (`add`)."""
        old = self._slot(key)
        if old is not None and self._usable is not None:
            self._usable[old] = False
            self._dead += 1
        self._moved_arrays = None
        return self._new_slot(key, eligible)

    def add(self, slot: int, term: str, impact: float) -> None:
        """A posting of a slot, if its word is held (else it is read with the word)."""
        word = self.words.get(term)
        if word is not None:
            word.more.append((slot, impact))
            if len(word.more) > MERGE_AT:
                word.arrays()

    def flag(self, key: int, eligible: bool) -> None:
        """An entry's eligibility changed, not what it holds: its slot follows in place."""
        slot = self._slot(key)
        if slot is not None and self._usable is not None:
            self._usable[slot] = eligible

    def slot(self, key: int) -> int | None:
        """The current slot of an entry (None: not held)."""
        return self._slot(key)

    def _load(self, conn: Connection, tenant_id: str) -> None:
        rows = driver_rows(conn, ENTRIES, {"tenant_id": tenant_id})
        keys = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        eligible = np.fromiter((r[1] for r in rows), np.bool_, len(rows))
        order = np.argsort(keys, kind="stable")
        self._base = keys[order]
        self._keys = self._base.copy()
        self._usable = eligible[order]
        self._n = len(rows)
        self.caught_up += len(rows)
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
        kept = {row[0] for row in driver_rows(conn, WORDS, {"tenant_id": tenant_id})}
        self.forget_words([t for t in self.words if t not in kept])

    def _load_words(self, conn: Connection, tenant_id: str) -> None:
        """Every word's list at once (a tenant of moderate size): no search then pays for a
        word's first use."""
        rows = driver_rows(conn, ALL_WORDS, {"tenant_id": tenant_id})
        start = 0
        for end in range(1, len(rows) + 1):
            if end < len(rows) and rows[end][0] == rows[start][0]:
                continue
            part = rows[start:end]
            keys = np.fromiter((r[1] for r in part), np.int64, len(part))
            impacts = np.fromiter((r[2] for r in part), np.float64, len(part))
            self.words[part[0][0]] = self._word_of(keys, impacts)
            start = end

    def _word_of(self, keys: Ints, impacts: Floats) -> Word:
        slots = self._slots_of(keys)
        known = slots >= 0  # an entry written since the catch-up comes with the next one
        order = np.argsort(slots[known], kind="stable")
        return Word(slots[known][order], impacts[known][order])

    def _slot(self, key: int) -> int | None:
        moved = self._moved.get(key)
        if moved is not None:
            return moved
        base = self._base
        if base is None or not len(base):
            return None
        i = int(np.searchsorted(base, key))
        return i if i < len(base) and int(base[i]) == key else None

    def _new_slot(self, key: int, usable: bool) -> int:
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

    def _slots_of(self, keys: Ints) -> Ints:
        """The current slot of each key (-1: a key not held, written after the catch-up)."""
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

    def _word(self, conn: Connection, tenant_id: str, term: str) -> Word:
        word = self.words.get(term)
        if word is None:
            rows = driver_rows(conn, WORD, {"tenant_id": tenant_id, "term": term})
            keys = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            impacts = np.fromiter((r[1] for r in rows), np.float64, len(rows))
            word = self._word_of(keys, impacts)
            if self.seen >= self.after:  # else read older than what is held: not kept
                self.words[term] = word
                self._size += len(word.slots)
        return word

    # -- what ranking reads --------------------------------------------------------------

    @property
    def usable(self) -> Flags:
        """Whether each slot in use is the current version of an eligible entry."""
        assert self._usable is not None
        return self._usable[: self._n]

    def keys(self, slots: Ints) -> Ints:
        """The entry key of each of some slots."""
        assert self._keys is not None
        return self._keys[slots]

    def word(self, conn: Connection, tenant_id: str, term: str) -> Word:
        """A word's postings (loaded at its first use)."""
        return self._word(conn, tenant_id, term)

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
