"""What "Why was this retrieved?" shows of each matching source: the passage that matched
(its messages; of a long message only the characters that matched, marked), what found it
(its words, its meaning, both; held for review) and its score's parts, all from the
ExplainRetrieval response and the source as GetSource reads it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmem.console import excerpts, turns
from agentmem.v1 import retrieval_pb2, sources_pb2

BY = retrieval_pb2.MatchedBy
FOUND_BY = {
    BY.MATCHED_BY_LEXICAL: "its words",
    BY.MATCHED_BY_SEMANTIC: "its meaning",
    BY.MATCHED_BY_BOTH: "its words and its meaning",
}


@dataclass(frozen=True)
class Explained:
    matched_by: str  # "matched by its words", "held for review; matched by its words", …
    score_parts: str  # "" for a filtered source (search never scored it)
    where: str = ""  # "messages 13 to 14": a ranked conversation's passage
    passage: tuple[turns.Turn, ...] = ()  # its turns (empty: not readable, or plain text)
    link: str = ""  # the source page, unfolded at the passage


def matched_by(e: retrieval_pb2.ExplanationEntry) -> str:
    """Which side of search found it (words alone when meaning search is off); a source held
    for review is matched by its words but never ranked."""
    found = f"matched by {FOUND_BY.get(e.matched_by, 'its words')}"
    if e.reason == retrieval_pb2.REASON_PENDING_REVIEW:
        return f"held for review; {found}"
    return found


def score_parts(e: retrieval_pb2.ExplanationEntry) -> str:
    """What the score (shown beside) is made of: words alone, their BM25; with meaning search
    on, each side's score (words: BM25 relative to the best match, times the share of the
    query's words held, squared; meaning: cosine similarity), whose weighted sum it is."""
    if not e.rank:
        return ""
    if e.matched_by == BY.MATCHED_BY_UNSPECIFIED:
        return "BM25 of its words"
    return f"words {e.lexical_score:.3f} · meaning {e.semantic_score:.3f}, fused"


def _passage_turns(
    source: sources_pb2.Source, p: retrieval_pb2.Passage, words: re.Pattern[str] | None
) -> tuple[turns.Turn, ...]:
    """The passage's turns, each (of a long message: its matched part) as an excerpt with
    the query's words marked."""
    cut = (excerpts.ELLIPSIS, False)
    out = []
    for i in turns.matched_turns(p):
        if i >= len(source.messages):
            break
        m = source.messages[i]
        lo, hi = (p.char_start, p.char_end) if p.char_end > p.char_start else (0, len(m.content))
        pieces = list(excerpts.excerpt(m.content[lo:hi], words))
        if lo > 0 and pieces[:1] != [cut]:
            pieces.insert(0, cut)
        if hi < len(m.content) and pieces[-1:] != [cut]:
            pieces.append(cut)
        out.append(turns.Turn(i + 1, turns.turn(i, m, None).speaker, tuple(pieces), True))
    return tuple(out)


def explained(
    e: retrieval_pb2.ExplanationEntry,
    source: sources_pb2.Source | None,
    words: re.Pattern[str] | None = None,
) -> Explained:
    """One entry as the page shows it (`source`: read with its content, or None; `words`:
    the query's, `excerpts.pattern`)."""
    if not e.HasField("passage"):
        return Explained(matched_by(e), score_parts(e))
    p = e.passage
    shown = _passage_turns(source, p, words) if source is not None else ()
    link = f"/sources/{e.source_id}?passage={p.message_start}-{p.message_end}"
    if p.char_end > p.char_start:
        link += f":{p.char_start}-{p.char_end}"
    return Explained(
        matched_by(e),
        score_parts(e),
        turns.where(p),
        shown,
        f"{link}#m-{p.message_end + 1}",
    )
