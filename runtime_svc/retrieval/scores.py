"""Scores and how they compare: the one tolerance, and the one k-th score function.

A lexical score is each query word's impact times its idf, added in the order of the words'
stems (`lexical.statistics.QueryStats.by_stem`): every ranker and every statement adds them
in that order, so one entry gets the same float whichever computes it (equal
scores stay equal, and ties go to the source id), and that order does not depend on anything
an ineligible source can move. Bounds are sums taken in other orders and may differ from a
score in the last bits: comparisons of a score against a bound leave `SLACK`.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from runtime_svc.domain import entry_keys

if TYPE_CHECKING:
    from numpy.typing import NDArray

SLACK = 1e-9


def kth_score(
    keys: Sequence[int] | NDArray[np.int64],
    scores: Sequence[float] | NDArray[np.float64],
    k: int,
    *,
    grouped: bool,
    excluded: frozenset[int] | set[int] = frozenset(),
) -> float | None:
    """The `k`-th best score among the entries `keys` scoring `scores` (above 0) — per source
    (each by its best entry) when `grouped` — leaving out the sources `excluded`; None when
    fewer score. The best few are looked at first (enough sources among them, mostly), then
    more; numpy selects them from arrays, `heapq` from lists (numpy is not imported for a
    search that holds nothing in memory)."""
    if len(scores) < k:
        return None
    n = min(64 * k, len(scores))
    while True:
        seen: set[int] = set()
        taken = 0
        for i in _best(scores, n):
            value = float(scores[i])
            if value <= 0.0:
                return None
            source = entry_keys.source_pk(int(keys[i]))
            if source in excluded or (grouped and source in seen):
                continue
            seen.add(source)
            taken += 1
            if taken == k:
                return value
        if n == len(scores):
            return None
        n = min(4 * n, len(scores))


def _best(scores: Sequence[float] | NDArray[np.float64], n: int) -> list[int]:
    """The positions of the `n` best scores, best first (ties in position order)."""
    if isinstance(scores, Sequence):
        return heapq.nlargest(n, range(len(scores)), key=scores.__getitem__)
    top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
    best: list[int] = top[np.argsort(-scores[top], kind="stable")].tolist()
    return best
