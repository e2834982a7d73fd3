"""Held postings following each committed change of their tenant's index as its writer
tells it (`storage.index_changes`), so that a search never pays for the writes made since
the last one: an eligibility change flips its entries' slots in place, entries written get
new slots and their postings, words gone are forgotten.

Changes are applied in stamp order, each right after the one before (`Held.after`); one
told ahead of its turn waits (`Held.pending`) for the ones before it. Those made by another
process are never told here: the read-side catch-up (`Held.catch_up`) finds them by their
stamp, and then the changes waiting that it covered are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from runtime_svc.retrieval.held.held_postings import Held
from runtime_svc.storage.index_changes import Flagged, IndexChange, WordsGone, Written

PENDING_MAX = 10_000  # changes waiting beyond this many: left to the catch-up


def apply(held: Held, changes: Iterable[IndexChange]) -> int:
    """Applies what it can of `changes` (use under the held tenant's lock); how many."""
    if held.after < 0:  # nothing loaded yet: the first search loads it all
        return 0
    pending = held.pending
    for change in changes:
        if change.stamp > held.after:
            pending[change.stamp] = change
    applied = 0
    while held.after + 1 in pending:
        change = pending.pop(held.after + 1)
        if not _apply(held, change):
            pending.clear()  # an entry not held: the next search catches up from the index
            break
        held.after = change.stamp
        applied += 1
    for stamp in [s for s in pending if s <= held.after]:
        del pending[stamp]
    if len(pending) > PENDING_MAX:
        pending.clear()
    return applied


def _apply(held: Held, change: IndexChange) -> bool:
    if isinstance(change, Flagged):
        # Every key first: a change is applied whole or not at all.
        if any(held.slot(key) is None for key in change.keys):
            return False
        for key in change.keys:
            held.flag(key, change.eligible)
    elif isinstance(change, Written):
        for key, eligible, impacts in change.entries:
            slot = held.renew(key, eligible)
            for term, impact in impacts.items():
                held.add(slot, term, impact)
    elif isinstance(change, WordsGone):
        held.forget_words(change.words)
    return True
