"""One word's postings held in memory (`retrieval.held.held_postings`): its slots and impacts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]
    Floats = NDArray[np.float64]


@dataclass
class Word:
    """A word's postings: slots in increasing order (new slots are always the largest, so
    appending keeps the order), with their impacts."""

    slots: Ints
    impacts: Floats
    more: list[tuple[int, float]] = field(default_factory=list)

    def arrays(self) -> tuple[Ints, Floats]:
        if self.more:
            self.more.sort()
            slots, impacts = zip(*self.more, strict=True)
            self.slots = np.concatenate([self.slots, np.asarray(slots, np.int64)])
            self.impacts = np.concatenate([self.impacts, np.asarray(impacts, np.float64)])
            self.more = []
        return self.slots, self.impacts

    def impacts_of(self, slots: Ints) -> Floats:
        """The impact of each of some slots (sorted), 0.0 where the word is not held."""
        mine, impacts = self.arrays()
        if not len(mine):
            return np.zeros(len(slots), np.float64)
        i = np.minimum(np.searchsorted(mine, slots), len(mine) - 1)
        return np.where(mine[i] == slots, impacts[i], 0.0)
