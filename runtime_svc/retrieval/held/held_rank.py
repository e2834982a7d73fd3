"""The rankers over a tenant's postings held in memory (`retrieval.held.held_postings`): every slot
scored (dense), or only the slots that can reach the top k (MaxScore-pruned).

Dense: every usable entry holding a query word gets its exact score with numpy, word by word
in the words' stem order (the sums every other path computes); the best are offered to the
eligible-take loop (`retrieval.take`) in rounds, the first found by one comparison against a
floor taken from the shortest word list. Pruned: the slots of the shortest list are scored
exactly and the `limit`-th best source among them gives a floor; words whose bounds add up
to less cannot lift an entry holding none of the others to it, so only the slots of the other
words' lists that can reach the floor are candidates. The result stands when the loop takes
`limit` sources scoring at least that floor (every entry that can is a candidate); otherwise
(sources refused) the dense ranker runs instead. Both are exact, like the tables' top k.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection

from runtime_svc.domain import entry_keys
from runtime_svc.domain.lexical import TermStats
from runtime_svc.retrieval import plan, take
from runtime_svc.retrieval.held.held_postings import Held
from runtime_svc.retrieval.held.held_words import Word
from runtime_svc.retrieval.lexical.statistics import QueryStats
from runtime_svc.retrieval.scores import SLACK, kth_score

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]
    Floats = NDArray[np.float64]


Pool = Callable[[], "tuple[Ints, Floats]"]  # slots and their scores, made when reached


@dataclass(frozen=True)
class Candidates:
    """The pruned ranker's candidates with their exact scores, and the floor they cover:
    every usable slot scoring at least `floor` is among them."""

    slots: Ints
    scores: Floats
    floor: float


def method(held: Held, conn: Connection, tenant_id: str, stats: QueryStats) -> plan.Lexical:
    """Dense or pruned, from the sizes of what is held (`plan.held_method`)."""
    lists = [held.word(conn, tenant_id, t.stem).arrays()[0] for t in stats.by_bound]
    return plan.held_method(len(held.usable), [len(s) for s in lists])


def search(
    held: Held,
    conn: Connection,
    tenant_id: str,
    stats: QueryStats,
    checker: take.Checker,
    limit: int,
    grouped: bool,
    chosen: plan.Lexical,
) -> tuple[list[take.Taken], plan.Lexical]:
    """The best `limit` eligible sources (each by its best entry; with `grouped` off, the
    best entries), best first; and the ranker that gave them."""
    # Slots offered in the first round: a few more than `limit`, for sources refused and
    # passages of one source (a round short of `limit` leads to one four times larger).
    # Each source checked costs (docs/benchmarks.md, design measurements).
    want = limit + max(4, limit // 4)
    if chosen is plan.Lexical.HELD_PRUNED:
        found = pruned(held, conn, tenant_id, stats, limit)
        if found is not None:
            ranker = Slots(held, [lambda: (found.slots, found.scores)])
            result = take.take(ranker, checker, limit, grouped, want)
            kth = result.kth(limit)
            if kth is not None and kth + SLACK >= found.floor:
                return result.taken, chosen
    scores, floor = dense(held, conn, tenant_id, stats, want)
    result = take.take(Slots(held, every_slot(scores, floor)), checker, limit, grouped, want)
    return result.taken, plan.Lexical.HELD_DENSE


class Slots:
    """Held slots offered best first (`best_first`), looked up by their source."""

    def __init__(self, held: Held, pools: Sequence[Pool]) -> None:
        self._held, self._pools = held, pools
        self._offered: list[tuple[Ints, list[int]]] = []  # each round's slots and sources

    def rounds(self, want: int, refused: set[int]) -> Iterator[take.Round]:
        for slots, values in best_first(self._pools, want):
            keys = self._held.keys(slots)
            refs = entry_keys.source_pks(keys).tolist()
            self._offered.append((slots, refs))
            yield take.Round(values.tolist(), refs, keys.tolist())

    def discard(self, refs: set[int]) -> None:
        self._held.drop(
            [
                int(slot)
                for slots, sources in self._offered
                for slot, source in zip(slots.tolist(), sources, strict=True)
                if source in refs
            ]
        )


def dense(
    held: Held, conn: Connection, tenant_id: str, stats: QueryStats, want: int
) -> tuple[Floats, float]:
    """Every slot's exact score for the query words (0 for an unusable slot or one holding
    none of them); and a score that at least `want` slots reach (0.0 when fewer score): the
    `want`-th best among the slots of the shortest word list that has that many usable ones
    (the rarest words' lists are short), so that the best are found by one comparison
    rather than a selection over every slot."""
    usable = held.usable
    total = np.zeros(len(usable), np.float64)
    lists = []
    for t in stats.by_stem:
        slots, impacts = held.word(conn, tenant_id, t.stem).arrays()
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
    held: Held, conn: Connection, tenant_id: str, stats: QueryStats, limit: int
) -> Candidates | None:
    """MaxScore over the held lists: the usable slots that can score among the best `limit`
    sources, with their exact scores (None when the words cannot be told apart so).

    The slots of the shortest list are scored exactly; the `limit`-th best source among them
    gives a floor. Words whose upper bounds add up to less than that, the least weighty
    first, cannot lift an entry holding none of the others to it: only the slots of the
    other words' lists are candidates, and only those whose score from those words plus the
    least weighty ones' bounds reaches it."""
    terms = stats.by_bound
    words = {t.stem: held.word(conn, tenant_id, t.stem) for t in terms}
    lists = [words[t.stem].arrays()[0] for t in terms]
    usable = held.usable
    shortest = min(lists, key=len)
    sample = shortest[usable[shortest]]
    found = exact(words, stats.by_stem, sample)
    floor = kth_score(held.keys(sample), found, limit, grouped=True) or 0.0
    if floor <= 0.0:
        return None
    # `terms` go smallest upper bound first: the longest prefix whose bounds add up to less
    # than the floor is what cannot make an entry on its own.
    bound, cut = 0.0, 0
    while cut < len(terms) and bound + terms[cut].upper_bound < floor - SLACK:
        bound += terms[cut].upper_bound
        cut += 1
    if cut == 0:
        return None
    partial = np.zeros(len(usable), np.float64)
    for t, slots in zip(terms[cut:], lists[cut:], strict=True):
        partial[slots] += words[t.stem].impacts * t.idf
    # Each list's slots that can reach the floor (few), then each once.
    reaching = [slots[partial[slots] + bound >= floor - SLACK] for slots in lists[cut:]]
    candidates = np.unique(np.concatenate(reaching))
    candidates = candidates[usable[candidates]]
    return Candidates(candidates, exact(words, stats.by_stem, candidates), floor)


def exact(words: dict[str, Word], by_stem: Sequence[TermStats], slots: Ints) -> Floats:
    """The exact scores of some slots (sorted): each word's impact times its idf, added in
    the words' stem order (as every path adds them)."""
    total = np.zeros(len(slots), np.float64)
    for step, t in enumerate(by_stem):
        part = words[t.stem].impacts_of(slots) * t.idf
        total = part if step == 0 else total + part
    return total


def best_first(pools: Sequence[Pool], want: int) -> Iterator[tuple[Ints, Floats]]:
    """Slots with their scores, best first, in rounds of about `want` (growing): each round
    takes every slot of its pool scoring at least its lowest (ties included), so what is
    left scores less than all it took. `pools` are made when reached, each scoring less than
    every earlier one."""
    for make in pools:
        slots, values = make()
        while len(slots):
            if len(slots) > want:
                low = values[np.argpartition(-values, want)[:want]].min()
                took = values >= low
                now, now_values = slots[took], values[took]
                slots, values = slots[~took], values[~took]
                want *= 4
            else:
                now, now_values = slots, values
                slots, values = slots[:0], values[:0]
            order = np.argsort(-now_values, kind="stable")
            yield now[order], now_values[order]


def every_slot(scores: Floats, floor: float) -> list[Pool]:
    """The pools of `best_first` over a score per slot: those reaching `floor` (found by one
    comparison), then the rest above 0."""

    def at(mask: NDArray[np.bool_]) -> tuple[Ints, Floats]:
        slots = np.flatnonzero(mask)
        return slots, scores[slots]

    if floor <= 0.0:
        return [lambda: at(scores > 0.0)]
    return [lambda: at(scores >= floor), lambda: at((scores > 0.0) & (scores < floor))]
