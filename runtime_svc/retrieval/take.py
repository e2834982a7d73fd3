"""The eligible-take loop, the one every ranker's candidates go through: rank → check the best
candidates' sources for eligibility in SQL, in rounds → the best passage per source.

A ranker (`Ranker`) offers its candidates best first, in rounds: each round holds every
candidate scoring at least its lowest (ties included), so nothing offered later scores as
much as anything offered before. The loop checks the sources of each round that were not
checked yet against the tenant and the whole eligibility predicate (`Checker`: one statement
a round), keeps each eligible source's best entry (or, not grouped, each entry), and stops
as soon as a round leaves it `limit` of them: nothing offered later can enter. So the top k
is taken among eligible sources only and never under-filled while eligible candidates remain.
Ties go to the source id, then the entry key. A round ending in a long run of one score (common
words in short texts tie by the hundred) has that run looked up by source id first when the
checker can (`FirstChecker`): of the run, only the first few eligible sources by id can enter,
so only they are read whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, runtime_checkable

from runtime_svc.domain import entry_keys
from runtime_svc.storage.shown_sources import ShownSource


class Verdict(Enum):
    ELIGIBLE = "eligible"
    KEPT = "kept"  # refused now, yet the ranker keeps offering it (time may change it)
    DROPPED = "dropped"  # gone, or refused for a reason time does not change: forget it


@dataclass(frozen=True)
class Checked:
    verdict: Verdict
    row: ShownSource | None = None  # with ELIGIBLE: what a hit shows of the source
    key: int | None = None  # the entry, when the ranker does not know it (a vector's)


@dataclass(frozen=True)
class Round:
    """Candidates, best first: their scores, what the checker looks each up by (a source pk,
    or a vector's seq), and their entry keys (None: the checker tells them)."""

    scores: Sequence[float]
    refs: Sequence[int]
    keys: Sequence[int] | None = None


class Checker(Protocol):
    def check(self, refs: list[int]) -> Mapping[int, Checked]:
        """Verdicts of some candidates (missing: dropped)."""
        ...


@runtime_checkable
class FirstChecker(Protocol):
    def check_first(self, refs: list[int], need: int) -> Mapping[int, Checked]:
        """The eligible ones among candidates of one score, those of the `need` smallest
        source ids (all of them when fewer are eligible)."""
        ...


class Ranker(Protocol):
    def rounds(self, want: int, refused: set[int]) -> Iterator[Round]:
        """Candidates in rounds, best first (`want`: about how many the first should hold;
        `refused`: the sources refused so far, filled in by the loop as it goes)."""
        ...

    def discard(self, refs: set[int]) -> None:
        """Forget the candidates looked up by `refs` (their checks dropped them)."""
        ...


@dataclass(frozen=True)
class Taken:
    score: float
    key: int  # the entry
    row: ShownSource


@dataclass
class Result:
    taken: list[Taken] = field(default_factory=list)  # best first, at most `limit`
    refused: int = 0  # candidates whose source was refused

    def kth(self, limit: int) -> float | None:
        """The `limit`-th score taken; None when fewer."""
        return self.taken[limit - 1].score if len(self.taken) >= limit else None


def take(ranker: Ranker, checker: Checker, limit: int, grouped: bool, want: int) -> Result:
    """The best `limit` eligible sources (each by its best entry; with `grouped` off, the best
    entries) among the ranker's candidates, best first, ties by source id and entry key."""
    verdicts: dict[int, Checked] = {}
    best: dict[int, tuple[float, int, ShownSource]] = {}  # source (or entry) -> its best
    refused_sources: set[int] = set()
    dropped: set[int] = set()
    refused = 0
    first = checker.check_first if isinstance(checker, FirstChecker) else None

    def check(refs: Sequence[int]) -> None:
        unchecked = sorted(set(refs) - verdicts.keys())
        if unchecked:
            found = checker.check(unchecked)
            for ref in unchecked:
                verdicts[ref] = found.get(ref, _DROPPED)

    def fold(r: Round, at: Iterable[int]) -> list[int]:
        """Keeps the eligible among candidates `at` of a round (positions); returns the
        positions passed over (not looked up)."""
        nonlocal refused
        passed: list[int] = []
        for i in at:
            score, ref = r.scores[i], r.refs[i]
            checked = verdicts.get(ref)
            if checked is None:
                passed.append(i)
                continue
            key = checked.key if r.keys is None else r.keys[i]
            if checked.row is None or checked.verdict is not Verdict.ELIGIBLE or key is None:
                refused += 1
                if key is not None:
                    refused_sources.add(entry_keys.source_pk(key))
                if checked.verdict is Verdict.DROPPED:
                    dropped.add(ref)
                continue
            slot = entry_keys.source_pk(key) if grouped else key
            held = best.get(slot)
            if held is None or (-score, key) < (-held[0], held[1]):
                best[slot] = (score, key, checked.row)
        return passed

    for r in ranker.rounds(want, refused_sources):
        n = len(r.refs)
        tie = _last_tie(r.scores) if first is not None else n
        check(r.refs[:tie])
        fold(r, range(tie))
        if tie < n and len(best) < limit:
            # A round's lowest score, shared by many (common words, short texts): only the
            # first by source id can enter, so only they are looked up whole.
            need = limit - len(best)
            unchecked = sorted(set(r.refs[tie:]) - verdicts.keys())
            if first is not None and len(unchecked) > need + _TIE_SPARE:
                found = first(unchecked, need)
                verdicts.update(found)
                if len(found) < need:  # every eligible one found: the rest are refused now
                    for ref in unchecked:
                        verdicts.setdefault(ref, _KEPT)
            else:
                check(unchecked)
            passed = fold(r, range(tie, n))
            if passed and len(best) < limit:  # not expected: the ones passed over, whole
                check([r.refs[i] for i in passed])
                fold(r, passed)
        if len(best) >= limit:
            break
    if dropped:
        ranker.discard(dropped)
    ranked = sorted(best.values(), key=lambda b: (-b[0], b[2].source_id, b[1]))[:limit]
    return Result([Taken(score, key, row) for score, key, row in ranked], refused)


def _last_tie(scores: Sequence[float]) -> int:
    """Where the run of scores equal to the last one starts (scores best first)."""
    i = len(scores)
    while i > 0 and scores[i - 1] == scores[-1]:
        i -= 1
    return i


_DROPPED = Checked(Verdict.DROPPED)
_KEPT = Checked(Verdict.KEPT)
_TIE_SPARE = 8  # a tie this much larger than what can enter is looked up by source id first
