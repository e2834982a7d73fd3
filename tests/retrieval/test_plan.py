"""The plan, chosen in one place (`retrieval.plan`): which ranker runs for which tenant."""

from __future__ import annotations

import pytest

from runtime_svc.retrieval import plan
from runtime_svc.retrieval.plan import Lexical, Vector


@pytest.mark.parametrize(
    ("entries", "held_min", "expected"),
    [
        (10, None, Lexical.TABLES),
        (4_999, 5_000, Lexical.TABLES),
        (5_000, 5_000, Lexical.HELD_DENSE),
        (0, 0, Lexical.HELD_DENSE),
    ],
)
def test_tables_below_the_held_size_held_from_it(entries, held_min, expected) -> None:
    assert plan.lexical(entries, held_min) is expected


@pytest.mark.parametrize(
    ("slots", "lists", "expected"),
    [
        (1_000, [10, 20], Lexical.HELD_DENSE),  # few postings: every slot scored
        (1_000_000, [100], Lexical.HELD_DENSE),  # one word: nothing to prune with
        (1_000_000, [100, 900_000], Lexical.HELD_PRUNED),
        (1_000_000, [60_000, 900_000], Lexical.HELD_DENSE),  # no short list to sample
    ],
)
def test_pruned_only_when_many_postings_and_a_short_list(slots, lists, expected) -> None:
    assert plan.held_method(slots, lists) is expected


@pytest.mark.parametrize(
    ("sqlite", "entries", "dimension", "expected"),
    [
        (False, 10, 384, Vector.PGVECTOR),
        (True, 1_000, 384, Vector.IN_MEMORY),
        (True, 9_000, 384, Vector.IN_SQL),  # too many floats to read for one search
        (True, 20_000, 384, Vector.COARSE),
    ],
)
def test_vectors_by_backend_and_size(sqlite, entries, dimension, expected) -> None:
    chosen = plan.vector(
        sqlite=sqlite,
        entries=entries,
        dimension=dimension,
        exact_max=10_000,
        candidates=50,
        model_id="m",
        min_similarity=-1.0,
        grouped=True,
    )
    assert chosen.method is expected and chosen.coarse == 50 * plan.COARSE_FACTOR
