"""Retrieval rules: how matches are explained, and how the prompt block is rendered within a
token budget. Pure functions, no storage. (Scoring: `runtime_svc.domain.lexical`.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from runtime_svc.domain.eligibility import State, reason_order
from runtime_svc.domain.passages import Range
from runtime_svc.domain.text import Term, count_tokens, token_stems


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
    # side's score (runtime_svc.domain.fusion).
    matched_by: str = ""
    lexical_score: float = 0.0
    semantic_score: float = 0.0


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
            m.source_id, m.revision, m.classification, False, m.state.value, matched_by=m.matched_by
        )
        for m in filtered
    ]
    return entries


@dataclass(frozen=True)
class Candidate:
    source_id: str
    revision: int
    text: str
    passage: Range | None = None  # the conversation's messages (None: the whole text)

    def cite(self) -> str:
        p = self.passage
        return f"{self.source_id}@{self.revision}" + (f"#{p.start}-{p.end}" if p else "")


@dataclass(frozen=True)
class PromptBlock:
    context: str
    cited: tuple[Candidate, ...]
    tokens: int


HEADER = "<memories>\nWhat you remember about the user; each line cites its source.\n"
FOOTER = "</memories>"


def render_prompt(candidates: Sequence[Candidate], token_budget: int) -> PromptBlock:
    """Memories (or a conversation's passages, with their context and speakers) in rank
    order while the block fits the budget; one that does not fit is skipped (never cut), and
    the next ones are still tried. A passage overlapping one already included is skipped."""
    fixed = count_tokens(HEADER) + count_tokens(FOOTER)
    if not candidates or fixed >= token_budget:
        return PromptBlock("", (), 0)
    lines: list[str] = []
    cited: list[Candidate] = []
    used = fixed
    for c in candidates:
        if any(_overlap(c, o) for o in cited):
            continue
        line = f"[{len(cited) + 1}] ({c.cite()}) {_flat(c)}\n"
        cost = count_tokens(line)
        if used + cost > token_budget:
            continue
        lines.append(line)
        cited.append(c)
        used += cost
    if not cited:
        return PromptBlock("", (), 0)
    return PromptBlock(HEADER + "".join(lines) + FOOTER, tuple(cited), used)


def _overlap(a: Candidate, b: Candidate) -> bool:
    if a.source_id != b.source_id:
        return False
    if a.passage is None or b.passage is None:
        return True
    return a.passage.start <= b.passage.end and b.passage.start <= a.passage.end


def _flat(c: Candidate) -> str:
    """One line: a passage's messages joined by " / " (speakers kept), else words joined."""
    if c.passage is None:
        return " ".join(c.text.split())
    return " / ".join(" ".join(part.split()) for part in c.text.splitlines() if part.strip())


SNIPPET_WORDS = 24


def snippet(text: str, terms: Sequence[Term], words: int = SNIPPET_WORDS) -> str:
    """About `words` words of `text` around the first word that matches a query term."""
    tokens = text.split()
    stems = {t.stem for t in terms}
    first = next((i for i, tok in enumerate(tokens) if not stems.isdisjoint(token_stems(tok))), 0)
    start = max(0, min(first - words // 3, len(tokens) - words))
    end = min(len(tokens), start + words)
    return ("…" if start else "") + " ".join(tokens[start:end]) + ("…" if end < len(tokens) else "")
