"""Retrieval rules: how matches are explained, and snippets. Pure functions, no storage.
(Scoring: `runtime_svc.domain.lexical`; the prompt block: `runtime_svc.assembly`.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from runtime_svc.domain.eligibility import State, reason_order
from runtime_svc.domain.passages import Part, Range
from runtime_svc.domain.query import Query
from runtime_svc.domain.text import token_stems


class Reason(StrEnum):
    SELECTED = "selected"
    BELOW_LIMIT = "below_limit"
    THREAD_MEMORY_DISABLED = "thread_memory_disabled"
    # otherwise the source's effective state names the reason (cold, pending_review, …)


@dataclass(frozen=True)
class Match:
    source_id: str
    revision: int
    classification: str
    state: State
    score: float  # higher is better
    # With hybrid retrieval: which side found it ("lexical", "semantic", "both"), each
    # side's score (runtime_svc.retrieval.fusion).
    matched_by: str = ""
    lexical_score: float = 0.0
    semantic_score: float = 0.0
    hold_reason: str = ""  # why what it says held it for review


@dataclass(frozen=True)
class Entry:
    source_id: str
    revision: int
    classification: str
    included: bool
    reason: str  # a Reason or a State value
    rank: int = 0
    score: float = 0.0
    matched_by: str = ""
    lexical_score: float = 0.0
    semantic_score: float = 0.0
    hold_reason: str = ""
    # A ranked conversation's: the passage that matched, and of a long message the part
    # (`runtime_svc.services.matched_passages`); None otherwise.
    passage: Range | None = None
    part: Part | None = None


def ranking_key(m: Match) -> tuple[float, str]:
    """Best score first, ties broken by source id: the order search uses too."""
    return (-m.score, m.source_id)


def filtered_key(m: Match) -> tuple[int, str]:
    """Filtered matches in lifecycle order of their reason (`eligibility.RULES`), then by
    source id: never by a score, which a filtered entry does not carry."""
    return (reason_order(m.state), m.source_id)


def explain(
    matches: Sequence[Match], limit: int, *, thread_disabled: bool, ranked: bool = False
) -> list[Entry]:
    """Selected (by rank), then eligible below the limit, then filtered with their reason
    (the source's effective state: its terminal phase first) and without scores; erased
    sources are never listed. With `ranked`, eligible matches are already in ranking order
    (hybrid retrieval ranks its candidates before the other matches)."""
    eligible = [m for m in matches if m.state is State.ELIGIBLE]
    if not ranked:
        eligible.sort(key=ranking_key)
    filtered = sorted(
        (m for m in matches if m.state not in (State.ELIGIBLE, State.ERASED)), key=filtered_key
    )
    entries = []
    for rank, m in enumerate(eligible, start=1):
        if thread_disabled:
            reason, included = Reason.THREAD_MEMORY_DISABLED, False
        elif rank <= limit:
            reason, included = Reason.SELECTED, True
        else:
            reason, included = Reason.BELOW_LIMIT, False
        entries.append(
            Entry(
                m.source_id,
                m.revision,
                m.classification,
                included,
                reason.value,
                rank=rank,
                score=m.score,
                matched_by=m.matched_by,
                lexical_score=m.lexical_score,
                semantic_score=m.semantic_score,
            )
        )
    entries += [
        Entry(
            m.source_id,
            m.revision,
            m.classification,
            False,
            m.state.value,
            matched_by=m.matched_by,
            hold_reason=m.hold_reason,
        )
        for m in filtered
    ]
    return entries


def as_prompt(entries: Sequence[Entry], cited: set[str]) -> list[Entry]:
    """An explanation whose selection is a prompt block's: the cited sources are selected,
    every other eligible match is below the limit (the block had no room for it); filtered
    entries keep their reason."""
    out = []
    for e in entries:
        if e.rank and e.reason in (Reason.SELECTED, Reason.BELOW_LIMIT):
            chosen = e.source_id in cited
            reason = Reason.SELECTED if chosen else Reason.BELOW_LIMIT
            e = replace(e, included=chosen, reason=reason.value)
        out.append(e)
    return out


SNIPPET_WORDS = 24
SNIPPET_CHARS = 300  # a "word" may be thousands of characters (a hash, a minified line)


def snippet(text: str, query: Query, words: int = SNIPPET_WORDS) -> str:
    """About `words` words of `text` around the first word that matches a query term, and
    at most about `SNIPPET_CHARS` characters."""
    tokens = text.split()
    stems = set(query.stems)
    first = next((i for i, tok in enumerate(tokens) if not stems.isdisjoint(token_stems(tok))), 0)
    start = max(0, min(first - words // 3, len(tokens) - words))
    end = min(len(tokens), start + words)
    body = " ".join(tokens[start:end])
    if len(body) > SNIPPET_CHARS:
        body, end = body[:SNIPPET_CHARS], -1
    return ("…" if start else "") + body + ("…" if end < len(tokens) else "")
