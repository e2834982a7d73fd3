"""What a committed change did to a tenant's search index, as its writer knows it: told to
the postings this process holds in memory (`retrieval.held.held_postings`), so that they follow each
change as it commits instead of reading it back at the next search.

Each change carries the tenant's index stamp it took (`tenant_state.index_stamp`): what is
held applies changes in stamp order, one after the other; a gap (a change made by another
process, or told late) is left to the read-side catch-up, which finds every change by its
stamp. Nothing here is text: entry keys, flags, words of the tenant's index and impacts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Written:
    """Entries written (new, or written again): each entry's key, whether it is eligible
    (ignoring time), and its words' impacts."""

    stamp: int
    entries: Sequence[tuple[int, bool, Mapping[str, float]]]


@dataclass(frozen=True)
class Flagged:
    """Entries whose eligibility (ignoring time) changed; what they hold did not."""

    stamp: int
    keys: Sequence[int]
    eligible: bool


@dataclass(frozen=True)
class WordsGone:
    """Words that no entry of the tenant's index holds any more."""

    stamp: int
    words: Sequence[str]


IndexChange = Written | Flagged | WordsGone
# (tenant, the changes of one committed transaction, in stamp order)
IndexChanged = Callable[[str, list[IndexChange]], None]
