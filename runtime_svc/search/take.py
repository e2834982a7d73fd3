"""The eligible-take loop, the one every ranker's candidates go through: rank → check the best
candidates' sources for eligibility in SQL, in rounds → the best passage per source.

A ranker (`Ranker`) offers its candidates best first, in rounds: each round holds every
candidate scoring at least its lowest (ties included), so nothing offered later scores as
much as anything offered before. The loop checks the sources of each round that were not
checked yet against the tenant and the whole eligibility predicate (`Checker`: one statement
a round), keeps each eligible source's best entry (or, not grouped, each entry), and stops
as soon as a round leaves it `limit` of them: nothing offered later can enter. So the top k
is taken among eligible sources only and never under-filled while eligible candidates remain.
Ties go to the source id, then the entry key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from runtime_svc.domain import entry_keys
from runtime_svc.search.hits import SourceRow


class Verdict(Enum):
    ELIGIBLE = "eligible"
    KEPT = "kept"  # refused now, yet the ranker keeps offering it (time may change it)
    DROPPED = "dropped"  # gone, or refused for a reason time does not change: forget it


@dataclass(frozen=True)
class Checked:
    verdict: Verdict
    row: SourceRow | None = None  # with ELIGIBLE: what a hit shows of the source
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
    row: SourceRow


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
    best: dict[int, tuple[float, int, SourceRow]] = {}  # source (or entry) -> its best
    refused_sources: set[int] = set()
    dropped: set[int] = set()
    refused = 0
    for r in ranker.rounds(want, refused_sources):
        unchecked = sorted(set(r.refs) - verdicts.keys())
        if unchecked:
            found = checker.check(unchecked)
            for ref in unchecked:
                verdicts[ref] = found.get(ref, _DROPPED)
        for i, (score, ref) in enumerate(zip(r.scores, r.refs, strict=True)):
            checked = verdicts[ref]
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
        if len(best) >= limit:
            break
    if dropped:
        ranker.discard(dropped)
    ranked = sorted(best.values(), key=lambda b: (-b[0], b[2].source_id, b[1]))[:limit]
    return Result([Taken(score, key, row) for score, key, row in ranked], refused)


_DROPPED = Checked(Verdict.DROPPED)
