"""Where a query's stems occur, found once per message, counts every slice exactly as
looking through that slice does (`message_parts.held`)."""

from __future__ import annotations

import itertools
import random

from runtime_svc.assembly.message_parts import held
from runtime_svc.assembly.stem_places import Places

WORDS = ["set", "reset", "cache", "caches", "db", "index", "a", "sets", "ex", "ab", "x"]


def test_a_slice_counts_as_looking_through_it() -> None:
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(WORDS) + rng.choice([" ", "", "\n", "-", "_"]) for _ in range(40))
        stems = set(rng.sample(["set", "cach", "db", "ex", "index", "ab", "x"], 4))
        places = Places(text, stems)
        assert places.count(0, len(text)) == held(text, stems)
        for _ in range(10):
            a = rng.randrange(len(text))
            b = rng.randrange(a, len(text) + 1)
            assert places.count(a, b) == held(text[a:b], stems)


def test_the_best_span_is_the_first_that_counts_the_most() -> None:
    rng = random.Random(11)
    for _ in range(300):
        text = "".join(rng.choice(WORDS) + rng.choice([" ", "", "\n", "-", "_"]) for _ in range(40))
        stems = set(rng.sample(["set", "cach", "db", "ex", "index", "ab", "x"], 4))
        places = Places(text, stems)
        cuts = sorted(rng.sample(range(1, len(text)), rng.randrange(0, 8)))
        bounds = [0, *cuts, len(text)]
        # Spans with gaps between some of them, as a message's parts may have.
        spans = [(a + (rng.random() < 0.3 and b - a > 1), b) for a, b in itertools.pairwise(bounds)]
        counts = [places.count(a, b) for a, b in spans]
        assert places.best(spans) == counts.index(max(counts))
