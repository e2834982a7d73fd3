"""Facts: statements extracted from memories, with provenance and a stated confidence.

The built-in extractor is deterministic and rule-based: it reads first-person statements
("I have …", "I live in …", "My dog is …") in the user's own words (the content of a memory,
or the user's messages of a conversation) and restates them about the user. An extractor
backed by a language model can stand in for it (`Extractor`).

A fact from a conversation names the message it was stated in; it cites that message's
passage (`passages.range_for`, the range the passage index uses for it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from runtime_svc.domain.passages import Range, Window, range_for
from runtime_svc.domain.sources import Body

MAX_OBJECT = 200


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str
    statement: str
    message: int | None = None  # the conversation's message it was stated in


@dataclass(frozen=True)
class Said:
    """Something the user said: a memory's content (`message` None) or one of the user's
    messages of a conversation (its 0-based index among all the messages)."""

    text: str
    message: int | None = None


class Extractor(Protocol):
    def extract(self, said: Sequence[Said]) -> list[Triple]: ...


# "I <verb> X" → "The user <verbs> X"
_VERBS = {
    "have": "has",
    "have got": "has",
    "own": "owns",
    "drive": "drives",
    "play": "plays",
    "use": "uses",
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "hate": "hates",
    "dislike": "dislikes",
    "live in": "lives in",
    "work at": "works at",
    "work as": "works as",
    "work for": "works for",
    "am": "is",
    "'m": "is",
    "speak": "speaks",
    "collect": "collects",
    "study": "studies",
    "teach": "teaches",
    "need": "needs",
    "want": "wants",
    "am allergic to": "is allergic to",
    "'m allergic to": "is allergic to",
}
_I_VERB = re.compile(
    r"^(?:and |so |also |actually |well, )?i(?: also| really| still| now| do)*\s*("
    + "|".join(sorted((re.escape(v) for v in _VERBS), key=len, reverse=True))
    + r")\s+(?P<object>.+)$",
    re.IGNORECASE,
)
_MY = re.compile(
    r"^my\s+(?P<thing>[\w' -]{1,60}?)\s+(?P<verb>is|are|was)\s+(?P<object>.+)$", re.IGNORECASE
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")


class RuleExtractor:
    """Per message: each triple names the message it was first stated in."""

    def extract(self, said: Sequence[Said]) -> list[Triple]:
        out: dict[Triple, Triple] = {}  # by content, the first statement kept
        for s in said:
            for sentence in _SENTENCES.split(s.text):
                triple = _triple(sentence.strip().rstrip(".!?;").strip())
                if triple and triple not in out:
                    out[triple] = replace(triple, message=s.message)
        return list(out.values())


def _triple(sentence: str) -> Triple | None:
    sentence = sentence.replace("\u2019", "'")  # typographic apostrophe
    m = _I_VERB.match(sentence)
    if m:
        predicate = _VERBS[m.group(1).lower()]
        obj = _clean(m.group("object"))
        return Triple("user", predicate, obj, f"The user {predicate} {obj}") if obj else None
    m = _MY.match(sentence)
    if m:
        thing, verb, obj = (
            m.group("thing").strip(),
            m.group("verb").lower(),
            _clean(m.group("object")),
        )
        return (
            Triple(f"user's {thing}", verb, obj, f"The user's {thing} {verb} {obj}")
            if obj
            else None
        )
    return None


def _clean(obj: str) -> str:
    obj = " ".join(obj.split())
    return obj[:MAX_OBJECT]


def user_texts(body: Body) -> list[Said]:
    """What the user said: the content, or the user's messages of a conversation."""
    if body.messages:
        return [Said(m.content, i) for i, m in enumerate(body.messages) if m.role == "user"]
    return [Said(body.content)]


def passage_of(triple: Triple, body: Body, window: Window) -> Range | None:
    """The passage a fact cites: that of the message it was stated in (none for a memory's
    content, or a message the conversation does not have)."""
    if triple.message is None or not 0 <= triple.message < len(body.messages):
        return None
    return range_for(triple.message, window)


# Confidence by how the memory came to be saved.
_CONFIDENCE = {
    "explicit_user_request": (0.9, "the user asked to remember it"),
    "user_confirmed": (0.85, "the user confirmed saving it"),
    "client_auto_save": (0.6, "saved by a client's auto-save without the user's confirmation"),
    "": (0.5, "stored without a save intent"),
}


def confidence(save_intent: str) -> tuple[float, str]:
    return _CONFIDENCE.get(save_intent, _CONFIDENCE[""])


@dataclass(frozen=True)
class Fact:
    fact_id: str
    triple: Triple
    confidence: float
    confidence_reason: str
    save_intent: str
    save_intent_source: str
    source_id: str
    source_revision: int
    created_at_us: int = 0
    passage: Range | None = None  # the conversation's passage it was stated in


@dataclass(frozen=True)
class ProfileEntry:
    key: str
    value: str
    confidence: float
    fact_ids: tuple[str, ...]


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


@dataclass(frozen=True)
class Answer:
    text: str
    basis: str  # "facts", "memories" or "none"
    confidence: float
    pieces: tuple[Piece, ...]


MEMORY_CONFIDENCE = 0.4  # a retrieved memory, not a fact extracted from it


def answer(facts: Sequence[Fact], memories: Sequence[Piece], token_budget: int) -> Answer:
    """Eligible facts first (most relevant first), else memories, within the token budget."""
    from runtime_svc.domain.text import count_tokens

    if facts:
        candidates = [
            Piece(
                f.triple.statement + ".",
                f.source_id,
                f.source_revision,
                f.save_intent,
                f.fact_id,
                f.passage,
            )
            for f in facts
        ]
        basis = "facts"
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
        return Answer("", "none", 0.0, ())
    if basis == "facts":
        by_id = {f.fact_id: f.confidence for f in facts}
        level = max(by_id[p.fact_id] for p in chosen)
    else:
        level = MEMORY_CONFIDENCE
    return Answer("\n".join(p.text for p in chosen), basis, level, tuple(chosen))


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
