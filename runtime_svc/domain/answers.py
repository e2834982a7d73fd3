"""Reading facts back: the profile, answers to questions, and one order for several rankings.

Every function here is given the facts that were current at the time asked about (the
storage query selects them by their chain, `fact_chains`); nothing here decides currency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from runtime_svc.domain.facts import Fact
from runtime_svc.domain.passages import Part, Range
from runtime_svc.domain.text import count_tokens


@dataclass(frozen=True)
class ProfileEntry:
    key: str
    value: str
    confidence: float
    fact_ids: tuple[str, ...]
    since_us: int = 0  # when the newest of its values became current


def profile(facts: Sequence[Fact]) -> list[ProfileEntry]:
    """One entry per (subject, predicate): its values, most confident first."""
    groups: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        groups.setdefault((f.triple.subject, f.triple.predicate), []).append(f)
    entries = []
    for (subject, predicate), group in sorted(groups.items()):
        group.sort(key=lambda f: (-f.confidence, f.created_at_us, f.fact_id))
        values: list[str] = []
        for f in group:
            if f.triple.object not in values:
                values.append(f.triple.object)
        entries.append(
            ProfileEntry(
                f"{subject} {predicate}",
                "; ".join(values),
                group[0].confidence,
                tuple(f.fact_id for f in group),
                max(f.valid_from_us for f in group),
            )
        )
    return entries


@dataclass(frozen=True)
class Piece:
    """One part of an answer, with its compact provenance."""

    text: str
    source_id: str
    source_revision: int
    save_intent: str
    fact_id: str = ""
    passage: Range | None = None  # a conversation's messages (a fact's or a memory's)
    valid_from_us: int = 0  # a fact's interval
    valid_to_us: int = 0
    changed: bool = False  # the fact's value replaced an earlier one
    # The characters of the one message (`passage`) the piece quotes (None: all of it).
    chars: Part | None = None


@dataclass(frozen=True)
class Answer:
    text: str
    basis: str  # "facts", "memories" or "none"
    confidence: float
    pieces: tuple[Piece, ...]
    # What was found but does not answer the question asked: shown, never part of the answer.
    related: tuple[Piece, ...] = ()

    @property
    def changed_at_us(self) -> int:
        """When the answer last changed: the newest time one of its facts replaced an
        earlier value (0: none of them did)."""
        return max((p.valid_from_us for p in self.pieces if p.changed), default=0)


MEMORY_CONFIDENCE = 0.4  # a retrieved memory, not a fact extracted from it


def _day(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, UTC).date().isoformat()


def fact_piece(f: Fact) -> Piece:
    """A fact as part of an answer: its statement, and since when it holds when it
    replaced an earlier value."""
    changed = bool(f.link.supersedes)
    text = f.triple.statement + (f" (since {_day(f.valid_from_us)})" if changed else "") + "."
    return Piece(
        text,
        f.source_id,
        f.source_revision,
        f.save_intent,
        f.fact_id,
        f.passage,
        f.valid_from_us,
        f.valid_to_us,
        changed,
    )


NOTHING = "Nothing stored answers this question."


def answer(
    facts: Sequence[Fact],
    memories: Sequence[Piece],
    token_budget: int,
    related: Sequence[Piece] = (),
) -> Answer:
    """Eligible facts first (most relevant first), else memories, within the token budget;
    `related`: what was found that does not answer the question (`questions`). With nothing
    that answers, the answer says so and the related pieces are its provenance only."""
    if not facts and not memories:
        return Answer(NOTHING, "none", 0.0, (), tuple(related))
    if facts:
        candidates, basis = [fact_piece(f) for f in facts], "facts"
    else:
        candidates, basis = list(memories), "memories"
    chosen: list[Piece] = []
    used = 0
    for piece in candidates:
        cost = count_tokens(piece.text)
        if used + cost <= token_budget:
            chosen.append(piece)
            used += cost
    if not chosen:
        return Answer(NOTHING, "none", 0.0, (), tuple(related))
    if basis == "facts":
        by_id = {f.fact_id: f.confidence for f in facts}
        level = max(by_id[p.fact_id] for p in chosen)
    else:
        level = MEMORY_CONFIDENCE
    return Answer("\n".join(p.text for p in chosen), basis, level, tuple(chosen), tuple(related))


RRF_K = 60  # reciprocal rank fusion's usual constant


def fuse_rankings(*rankings: Sequence[Fact], limit: int) -> list[Fact]:
    """Facts of several rankings in one order (reciprocal rank fusion), each once."""
    score: dict[str, float] = {}
    by_id: dict[str, Fact] = {}
    for ranking in rankings:
        for rank, f in enumerate(ranking):
            score[f.fact_id] = score.get(f.fact_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            by_id.setdefault(f.fact_id, f)
    order = sorted(score, key=lambda fid: (-score[fid], fid))
    return [by_id[fid] for fid in order[:limit]]
