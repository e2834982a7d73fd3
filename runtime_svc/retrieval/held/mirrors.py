"""The tenants whose postings this process holds in memory (`retrieval.held.held_postings.Held`):
least recently searched out first beyond `max_postings`; held before serving (`warm`), and
kept up to date with what other processes write (`sweep`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import Connection

from runtime_svc.retrieval.held import held_changes
from runtime_svc.retrieval.held.held_postings import Held
from runtime_svc.retrieval.held.held_sql import WORDS_BY_DOCS
from runtime_svc.storage.index_changes import IndexChange
from runtime_svc.storage.read_rows import driver_rows
from runtime_svc.storage.repositories import TenantEntries

Connect = Callable[[], AbstractContextManager[Connection]]


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
            held_changes.apply(held, ())  # changes told while the catch-up was needed
            yield held

    def warm(self, connect: Connect, tenants: Sequence[TenantEntries]) -> int:
        """Holds the largest tenants' postings, every word of each (the commonest first),
        within `max_postings`: a runtime does this before it serves, so that no search
        pays for loading a word. `tenants`: each tenant and its index entries. Returns the postings
        held."""
        held_in_all = 0
        for tenant_id, entries in sorted(tenants, key=lambda t: -t.entries):
            if entries < self.min_entries or held_in_all + entries > self._max:
                continue
            held = self._entry(tenant_id)
            with connect() as conn, conn.begin(), held.lock:
                held.catch_up(conn, tenant_id)
                for term in driver_rows(conn, WORDS_BY_DOCS, {"tenant_id": tenant_id}):
                    if held.postings + held_in_all > self._max:
                        break
                    held._word(conn, tenant_id, term[0])
                held_in_all += held.postings
        return held_in_all

    def forget(self, tenant_id: str) -> None:
        with self._lock:
            self._held.pop(tenant_id, None)

    def held(self, tenant_id: str) -> Held | None:
        with self._lock:
            return self._held.get(tenant_id)

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

    def apply(self, tenant_id: str, changes: list[IndexChange]) -> None:
        """What a committed transaction changed in the tenant's index, applied to what is
        held (if anything is): the next search of the tenant then has nothing to catch up
        on, however many changes were made since the last one."""
        with self._lock:
            held = self._held.get(tenant_id)
        if held is None:
            return
        with held.lock:
            held_changes.apply(held, changes)

    def sweep(self, connect: Connect) -> None:
        """Brings every tenant held up to date (each in a read transaction of its own), so
        that words removed from an index by another process leave this one's memory even
        when the tenant is not searched here again."""
        with self._lock:
            tenants = list(self._held.items())
        for tenant_id, held in tenants:
            with connect() as conn, conn.begin(), held.lock:
                held.catch_up(conn, tenant_id)
