"""Hybrid ranking: the lexical and the semantic side's candidates fused into one order.

Lexical scores (bm25, higher is better) are divided by the best lexical score of the query,
so they fall in (0, 1], and multiplied by the square of the share of the query's words the
candidate holds: a candidate that shares one word of a three-word question keeps a ninth of
its score, so a distractor matching one word of a question asked in other words does not
outrank what the question means. Semantic scores are cosine similarities. The fused score
is their weighted sum; a side that did not find a candidate contributes 0 for it. Candidates
that have no vector yet (not embedded so far) are ranked by their lexical score alone.
Candidates are keyed by any string (a source id, a passage's key).

The formula and its weights were chosen offline (`bench.tune_fusion`) on LoCoMo-dev and the
paraphrase set's tuning half. Measured on the same data and not kept (docs/benchmarks.md):
dividing by a query-dependent bound (the sum of the query words' largest idf x impact)
instead of the best score, min-max calibration of the cosine within the candidates,
gating the lexical score by the cosine, and reciprocal-rank fusion; each lost on LoCoMo-dev,
or gained less on the paraphrase set for what it lost there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from runtime_svc.domain.digest_cache import DigestCache, text_digest
from runtime_svc.domain.query import Query
from runtime_svc.domain.text import stem, words

# The power of the share of the query's words a lexical candidate holds (1: the plain share).
COVERAGE_EXPONENT = 2.0


class MatchedBy(StrEnum):
    LEXICAL = "lexical"
    SEMANTIC = "semantic"
    BOTH = "both"


@dataclass(frozen=True)
class Weights:
    lexical: float = 0.4  # retrieval.lexical_weight's default
    semantic: float = 0.6


K = TypeVar("K")  # what is ranked: a source id, or a (source id, passage) pair; ordered


@dataclass(frozen=True)
class Scored(Generic[K]):
    key: K  # the candidate (a source, or one of its passages)
    score: float  # fused, higher is better
    lexical: float  # normalized lexical score, 0 when the lexical side did not find it
    semantic: float  # cosine similarity, 0 when the semantic side did not find it
    matched_by: MatchedBy


def fuse(
    lexical: Mapping[K, float],
    semantic: Mapping[K, float],
    weights: Weights,
    *,
    similarity: Mapping[K, float] | None = None,
    best: float | None = None,
    coverage: Mapping[K, float] | None = None,
    coverage_exponent: float = COVERAGE_EXPONENT,
) -> list[Scored[K]]:
    """Every candidate of either side with its fused score, best first, ties by key.

    `similarity` may give the cosine of lexical candidates the semantic side did not return
    (their vectors looked up directly), so that both scores count for every candidate; it
    does not change `matched_by`. `best` is the lexical score that normalizes to 1 (default:
    the best of `lexical`). `coverage` gives the share of the query's words each lexical
    candidate holds (1 when not given); its `coverage_exponent`th power multiplies the
    normalized lexical score."""
    best = max(lexical.values(), default=0.0) if best is None else best
    extra = similarity or {}
    out = []
    for key in lexical.keys() | semantic.keys():
        lex = min(1.0, lexical[key] / best) if key in lexical and best > 0 else 0.0
        lex *= (coverage or {}).get(key, 1.0) ** coverage_exponent
        sem = semantic.get(key, extra.get(key, 0.0))
        by = (
            MatchedBy.BOTH
            if key in lexical and key in semantic
            else MatchedBy.LEXICAL
            if key in lexical
            else MatchedBy.SEMANTIC
        )
        out.append(Scored(key, weights.lexical * lex + weights.semantic * sem, lex, sem, by))
    out.sort(key=lambda s: (-s.score, s.key))
    return out


def coverage(query: Query, text: str | Callable[[], str], entry: Hashable | None = None) -> float:
    """The share of the query's words (by stem) that occur in `text` (or in what it
    returns: a passage's text is rendered only when needed); `entry`: what names that text
    for good (a passage's source, revision, range and window), if anything, so that a long
    passage is neither rendered nor hashed again for every query that ranks it."""
    if not query.stems:
        return 0.0
    if entry is None:
        held = held_stems(text if isinstance(text, str) else text())
    else:
        held = _by_entry.get(entry, lambda: _stems_of(text if isinstance(text, str) else text()))
    return sum(hash(s) in held for s in query.stems) / len(query.stems)


# The stems a text holds, by the text's digest, as the stems' hashes (no memory text is
# kept): a passage is ranked by many queries, and finding every word of a long reply and
# stemming it costs more than the rest of its fusion.
_stems: DigestCache[bytes, frozenset[int]] = DigestCache(8192)
# The same, by what names a passage's text for good (ids and numbers only).
_by_entry: DigestCache[Hashable, frozenset[int]] = DigestCache(8192)


def held_stems(text: str) -> frozenset[int]:
    return _stems.get(text_digest(text), lambda: _stems_of(text))


def _stems_of(text: str) -> frozenset[int]:
    return frozenset(hash(stem(w)) for w in set(words(text)))
