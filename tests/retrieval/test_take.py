"""The eligible-take loop (`retrieval.take`), with a ranker and a checker of its own: rounds
best first, sources checked once, refused ones passed over without under-filling, dropped
ones forgotten, ties to the source id, grouped by source or not."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime_svc.domain import entry_keys
from runtime_svc.retrieval import take
from runtime_svc.storage.shown_sources import ShownSource


class Listed:
    """Candidates (key, score) offered best first, `size` a round (ties kept together)."""

    def __init__(self, scored: list[tuple[int, float]], size: int) -> None:
        self.scored = sorted(scored, key=lambda c: -c[1])
        self.size = size
        self.rounds_given = 0
        self.discarded: set[int] = set()

    def rounds(self, want: int, refused: set[int]) -> Iterator[take.Round]:
        i = 0
        while i < len(self.scored):
            end = min(i + self.size, len(self.scored))
            while end < len(self.scored) and self.scored[end][1] == self.scored[end - 1][1]:
                end += 1
            part = self.scored[i:end]
            self.rounds_given += 1
            yield take.Round(
                [s for _, s in part],
                [entry_keys.source_pk(k) for k, _ in part],
                [k for k, _ in part],
            )
            i = end

    def discard(self, refs: set[int]) -> None:
        self.discarded |= refs


class Verdicts:
    def __init__(self, verdicts: dict[int, take.Verdict]) -> None:
        self.verdicts = verdicts
        self.asked: list[int] = []

    def check(self, refs: list[int]) -> Mapping[int, take.Checked]:
        self.asked += refs
        return {
            pk: take.Checked(v, ShownSource(pk, f"src{pk:04d}", 1, "", "", "memory", ""))
            for pk in refs
            if (v := self.verdicts.get(pk, take.Verdict.ELIGIBLE)) is not take.Verdict.DROPPED
        }


class FirstVerdicts(Verdicts):
    """Also looks up a run of tied candidates by source id first (`take.FirstChecker`)."""

    def __init__(self, verdicts: dict[int, take.Verdict]) -> None:
        super().__init__(verdicts)
        self.by_id: list[int] = []

    def check_first(self, refs: list[int], need: int) -> Mapping[int, take.Checked]:
        self.by_id += refs
        ok = [pk for pk in refs if self.verdicts.get(pk, take.Verdict.ELIGIBLE) is _ELIGIBLE]
        return self.check(sorted(ok, key=lambda pk: f"src{pk:04d}")[:need])


_ELIGIBLE = take.Verdict.ELIGIBLE
candidates = st.lists(
    st.tuples(st.integers(1, 30), st.integers(0, 3), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])),
    unique_by=lambda c: (c[0], c[1]),
    max_size=60,
)
verdicts = st.dictionaries(st.integers(1, 30), st.sampled_from(list(take.Verdict)))


@settings(deadline=None)  # a loaded machine: no timing in unit tests
@given(candidates, verdicts, st.integers(1, 8), st.booleans(), st.integers(1, 6), st.booleans())
def test_the_loop_takes_the_best_eligible_whatever_the_rounds(
    cands, refused, limit, grouped, size, by_id
) -> None:
    scored = [(entry_keys.with_passage(pk, p), s) for pk, p, s in cands]
    checker = FirstVerdicts(refused) if by_id else Verdicts(refused)
    ranker = Listed(scored, size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(take, "_TIE_SPARE", 0)  # every tie longer than what can enter: by id
        got = take.take(ranker, checker, limit, grouped, limit)
    eligible = [
        (k, s)
        for k, s in scored
        if refused.get(entry_keys.source_pk(k), take.Verdict.ELIGIBLE) is take.Verdict.ELIGIBLE
    ]
    best: dict[int, tuple[int, float]] = {}
    for k, s in eligible:
        slot = entry_keys.source_pk(k) if grouped else k
        if slot not in best or (-s, k) < (-best[slot][1], best[slot][0]):
            best[slot] = (k, s)
    expected = sorted(best.values(), key=lambda c: (-c[1], entry_keys.source_pk(c[0]), c[0]))
    assert [(t.key, t.score) for t in got.taken] == expected[:limit]
    assert len(checker.asked) == len(set(checker.asked))  # each source checked once
    gone = {pk for pk, v in refused.items() if v is take.Verdict.DROPPED}
    assert ranker.discarded <= gone  # only what was dropped is forgotten


def test_the_loop_stops_at_the_round_that_fills_k() -> None:
    ranker = Listed([(entry_keys.entry_key(pk), 10.0 - pk) for pk in range(1, 10)], 3)
    got = take.take(ranker, Verdicts({}), 3, True, 3)
    assert [entry_keys.source_pk(t.key) for t in got.taken] == [1, 2, 3]
    assert ranker.rounds_given == 1


def test_a_refused_source_lets_the_next_round_in() -> None:
    ranker = Listed([(entry_keys.entry_key(pk), 10.0 - pk) for pk in range(1, 10)], 3)
    got = take.take(ranker, Verdicts({2: take.Verdict.KEPT}), 3, True, 3)
    assert [entry_keys.source_pk(t.key) for t in got.taken] == [1, 3, 4]
    assert got.refused == 1 and ranker.rounds_given == 2


def test_a_long_tie_is_read_whole_only_for_the_sources_that_can_enter() -> None:
    """Two hundred candidates of one score, some refused: the loop reads whole only the
    first eligible ones by source id, and takes the same as reading every one."""
    scored = [(entry_keys.entry_key(pk), 1.0) for pk in range(1, 201)]
    refused = {pk: take.Verdict.KEPT for pk in range(1, 201, 3)}
    plain, by_id = Verdicts(refused), FirstVerdicts(refused)
    got_plain = take.take(Listed(scored, 10), plain, 10, True, 10)
    got = take.take(Listed(scored, 10), by_id, 10, True, 10)
    assert [t.key for t in got.taken] == [t.key for t in got_plain.taken]
    assert len(plain.asked) == 200
    assert len(by_id.asked) == 10
