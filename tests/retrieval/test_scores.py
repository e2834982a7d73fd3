"""The one k-th score function (`retrieval.scores.kth_score`) against a brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime_svc.domain import entry_keys
from runtime_svc.retrieval.scores import kth_score

entries = st.lists(
    st.tuples(st.integers(1, 30), st.integers(0, 5), st.floats(0.01, 9.0)),
    unique_by=lambda e: (e[0], e[1]),
    max_size=60,
)


@settings(deadline=None)  # a loaded machine: no timing in unit tests
@given(entries, st.integers(1, 10), st.booleans(), st.sets(st.integers(1, 30), max_size=5))
def test_kth_score_is_the_kth_best_of_the_sources_not_excluded(found, k, grouped, excluded) -> None:
    keys = [entry_keys.with_passage(pk, p) for pk, p, _ in found]
    scores = [s for _, _, s in found]
    per: dict[int, float] = {}
    values = []
    for pk, _, s in found:
        if pk in excluded:
            continue
        if grouped:
            per[pk] = max(per.get(pk, 0.0), s)
        else:
            values.append(s)
    if grouped:
        values = list(per.values())
    values.sort(reverse=True)
    expected = values[k - 1] if len(values) >= k else None
    assert kth_score(keys, scores, k, grouped=grouped, excluded=excluded) == expected
