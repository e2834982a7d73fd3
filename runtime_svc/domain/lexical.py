"""Lexical ranking: what an index entry holds, how it is scored, and when a top k read from
part of the postings is certainly the top k (MaxScore). Pure functions, no storage.

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
        if w in STOP_WORDS:
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
    """Smallest upper bound first (the order MaxScore partitions in)."""
    return sorted(terms, key=lambda t: (t.upper_bound, t.stem))


def essential(terms: Sequence[TermStats], threshold: float | None) -> list[TermStats]:
    """MaxScore's essential terms: with `terms` by upper bound, the shortest suffix such that
    a memory holding none of its terms scores below `threshold` (the k-th best score known)
    and so cannot enter the top k; with no threshold yet, the term of largest bound."""
    if not terms:
        return []
    if threshold is None:
        return [terms[-1]]
    spent = 0.0
    for i, t in enumerate(terms):
        if spent + t.upper_bound >= threshold:
            return list(terms[i:])
        spent += t.upper_bound
    return []


@dataclass(frozen=True)
class ListRead:
    """How far one essential term's eligible postings were read, best impact first."""

    stem: str
    exhausted: bool
    last_impact: float  # the smallest impact read (meaningless when exhausted)


@dataclass(frozen=True)
class Certificate:
    exact: bool
    # No eligible memory left out of the result scores above the k-th returned score by more
    # than this: any memory missed scores at most `bound` (0 when exact).
    bound: float


def certify(
    terms: Sequence[TermStats],
    essential_terms: Sequence[TermStats],
    reads: Mapping[str, ListRead],
    kth_score: float | None,
) -> Certificate:
    """Whether the best k among memories reached through the essential terms' postings (each
    scored exactly over every query term) are the best k of all eligible memories.

    A memory never reached either holds no essential term — it scores at most the sum of the
    other terms' bounds — or holds one whose postings were read only down to some impact: it
    scores at most that impact times idf plus every other term's bound. The result is exact
    when the k-th score found is above both (ties go to the smaller source id, so equal is
    not enough) or when every query term's postings were read to the end."""
    names = {t.stem for t in essential_terms}
    rest = sum(t.upper_bound for t in terms if t.stem not in names)
    total = sum(t.upper_bound for t in terms)
    unread = 0.0
    for t in essential_terms:
        r = reads[t.stem]
        if not r.exhausted:
            unread = max(unread, total - t.upper_bound + t.idf * r.last_impact)
    bound = max(rest, unread)
    if len(names) == len(terms) and all(r.exhausted for r in reads.values()):
        return Certificate(True, 0.0)
    if kth_score is not None and kth_score > bound:
        return Certificate(True, 0.0)
    return Certificate(False, bound)
