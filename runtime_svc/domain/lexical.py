"""Lexical ranking: what an index entry holds, how it is scored, and when a top k read from
part of the postings is certainly the top k (threshold bounds with MaxScore's per-word
bounds). Pure functions, no storage.

Scoring is BM25 (k1 1.2, b 0.75) with every statistic taken from the searching tenant's own
memories: the number of its indexed memories and, per word, in how many of them it occurs.
Nothing another tenant stores changes a score. Length is normalised against a fixed
reference length instead of a running average, so a posting's impact (the BM25 term weight
without idf) is fixed when it is written and postings can be kept in impact order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runtime_svc.domain.text import STOP_WORDS, stem, words

K1 = 1.2
B = 0.75
REFERENCE_LENGTH = 12.0  # content words; about what one memory holds
MAX_WORD = 64  # longer "words" (hashes, encoded blobs) are not indexed, nor found


@dataclass(frozen=True)
class Entry:
    """What the index keeps for one memory: its length and each stem's impact."""

    length: int
    impacts: dict[str, float]


def analyse(text: str) -> Entry:
    """The content words of `text` (stop words dropped, Porter stems), as the index keeps
    them: the same analysis queries get (`text.query_terms`)."""
    counts: dict[str, int] = {}
    length = 0
    for w in words(text):
        if w in STOP_WORDS or len(w) > MAX_WORD:
            continue
        s = stem(w)
        if s:
            counts[s] = counts.get(s, 0) + 1
            length += 1
    return Entry(length, {s: impact(tf, length) for s, tf in counts.items()})


def impact(tf: int, length: int) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / REFERENCE_LENGTH))


def idf(docs: int, doc_freq: int) -> float:
    """Always positive, so every matching word adds to a score."""
    return math.log(1 + (docs - doc_freq + 0.5) / (doc_freq + 0.5))


@dataclass(frozen=True)
class TermStats:
    stem: str
    idf: float
    max_impact: float  # no posting of the stem in the tenant has a larger impact
    docs: int  # in how many of the tenant's entries it occurs

    @property
    def upper_bound(self) -> float:
        return self.idf * self.max_impact


def by_upper_bound(terms: Sequence[TermStats]) -> list[TermStats]:
    """Smallest upper bound first."""
    return sorted(terms, key=lambda t: (t.upper_bound, t.stem))


@dataclass(frozen=True)
class ListRead:
    """How far one word's eligible postings were read, best impact first."""

    depth: int  # postings read (0: none)
    exhausted: bool  # all of them
    last_impact: float  # the smallest impact read (meaningless when exhausted)


def contribution(term: TermStats, read: ListRead | None) -> float:
    """The most the word can add to the score of a memory not reached through the postings
    read so far: its bound when none were read, nothing when all were, else the impact
    where the reading stopped (an unreached posting's impact is no larger)."""
    if read is None or read.depth == 0:
        return term.upper_bound
    if read.exhausted:
        return 0.0
    return term.idf * read.last_impact


def unreached_bound(terms: Sequence[TermStats], reads: Mapping[str, ListRead]) -> float:
    """No memory reached through none of the postings read scores above this (the threshold
    of Fagin's algorithm, with MaxScore's bounds for words not read at all)."""
    return sum(contribution(t, reads.get(t.stem)) for t in terms)


@dataclass(frozen=True)
class Certificate:
    exact: bool
    # When not exact: no eligible memory left out of the result scores above this.
    bound: float


def certify(
    terms: Sequence[TermStats],
    reads: Mapping[str, ListRead],
    kth_score: float | None,
    floor: float | None,
) -> Certificate:
    """Whether the best k found are the best k of all eligible memories.

    Memories reached through the postings read have a lower bound (the impacts seen) and an
    upper bound (plus each other word's `contribution`); those whose upper bound reaches
    `floor` (the k-th best lower bound) were scored exactly and the best k of them returned;
    the others score below `floor`; unreached ones score at most `unreached_bound`. So the
    result is exact when the k-th score returned is above the unreached bound (ties go to the
    smaller source id, so equal is not enough) and not below `floor`, or when every word's
    postings were read to the end and every memory reached was scored (`floor` None)."""
    unreached = unreached_bound(terms, reads)
    if kth_score is not None and kth_score > unreached and (floor is None or kth_score >= floor):
        return Certificate(True, 0.0)
    if floor is None and all(t.stem in reads and reads[t.stem].exhausted for t in terms):
        return Certificate(True, 0.0)
    return Certificate(False, max(unreached, floor or 0.0))


def next_read(
    terms: Sequence[TermStats],
    reads: Mapping[str, ListRead],
    *,
    first: int,
    growth: int,
    budget: int | None,
) -> tuple[str, int] | None:
    """Which word to read deeper next, and to what depth: the one whose contribution to the
    bound is largest for the postings it costs (a rare word is read to its end at once; a
    common one, whose idf is small, late and only as deep as needed). None when every word
    is read to its end or to the budget."""
    best: tuple[float, str, int] | None = None
    for t in terms:
        r = reads.get(t.stem)
        depth = r.depth if r is not None else 0
        if (r is not None and r.exhausted) or (budget is not None and depth >= budget):
            continue
        deeper = first if depth == 0 else depth * growth
        if budget is not None:
            deeper = min(deeper, budget)
        gain = contribution(t, r) / max(min(deeper, t.docs), 1)
        if best is None or (gain, t.stem) > (best[0], best[1]):
            best = (gain, t.stem, deeper)
    return None if best is None else (best[1], best[2])
