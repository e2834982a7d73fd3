"""Hybrid ranking: the lexical and the semantic side's candidates fused into one order.

Lexical scores (bm25, higher is better) are divided by the best lexical score of the query,
so they fall in (0, 1], and multiplied by the share of the query's words the source holds
(a source that shares one common word of a long question is a weak lexical match even when
it is the best one); semantic scores are cosine similarities. The fused score is their
weighted sum; a side that did not find a source contributes 0 for it. Sources that have no
vector yet (not embedded so far) are ranked by their lexical score alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from runtime_svc.domain.text import Term, stem, words


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
) -> list[Scored[K]]:
    """Every candidate of either side with its fused score, best first, ties by key.

    `similarity` may give the cosine of lexical candidates the semantic side did not return
    (their vectors looked up directly), so that both scores count for every candidate; it
    does not change `matched_by`. `best` is the lexical score that normalizes to 1 (default:
    the best of `lexical`). `coverage` gives the share of the query's words each lexical
    candidate holds (1 when not given)."""
    best = max(lexical.values(), default=0.0) if best is None else best
    extra = similarity or {}
    out = []
    for key in lexical.keys() | semantic.keys():
        lex = min(1.0, lexical[key] / best) if key in lexical and best > 0 else 0.0
        lex *= (coverage or {}).get(key, 1.0)
        sem = semantic.get(key, extra.get(key, 0.0))
        by = (
            MatchedBy.BOTH
            if key in lexical and key in semantic
            else MatchedBy.LEXICAL
            if key in lexical
            else MatchedBy.SEMANTIC
        )
        out.append(Scored(key, weights.lexical * lex + weights.semantic * sem, lex, sem, by))
    out.sort(key=lambda s: (-s.score, s.key))  # type: ignore[arg-type, return-value]
    return out


def coverage(terms: Sequence[Term], text: str) -> float:
    """The share of the query's words (by stem) that occur in `text`."""
    if not terms:
        return 0.0
    held = {stem(w) for w in words(text)}
    return sum(t.stem in held for t in terms) / len(terms)
