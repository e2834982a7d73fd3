"""Facts: statements extracted from memories, with provenance, a stated confidence and time.

An extractor (`runtime_svc.domain.extraction.RuleExtractor`, or one backed by a language
model) reads what the user said (the content of a memory, or the user's messages of a
conversation) and returns `Triple`s: who (`subject`: "user", "user's sister"), what
(`predicate`), the value (`object`), whether the statement says the value *ended*
("I no longer live in Lisbon"), how it was read (`How`), and where it was said (the
message, and the sentence within it).

A fact's time is its statement's (`valid_from_us`: a message's `sent_at`, else the memory's
`observed_at`); whether it is current is its attribute's chain (`fact_chains`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from runtime_svc.domain.fact_chains import NONE, Link
from runtime_svc.domain.passages import Range, Window, range_for
from runtime_svc.domain.sources import Body, Source

MAX_OBJECT = 200


class How(StrEnum):
    """How a fact was read from the text; its confidence says so."""

    DIRECT = "direct"  # a sentence stating one fact
    CLAUSE = "clause"  # one clause of a compound sentence
    ELIDED = "elided"  # a coordinated clause whose subject was left out ("… and work at X")
    CHANGE = "change"  # read from a change ("I moved to X", "my new job is at X")
    MODEL = "model"  # a language model's reading


# How → (factor of the save intent's confidence, why).
HOW: dict[How, tuple[float, str]] = {
    How.DIRECT: (1.0, "stated directly"),
    How.CLAUSE: (0.95, "one clause of a longer sentence"),
    How.ELIDED: (0.9, "a clause whose subject was left out"),
    How.CHANGE: (0.95, "read from a change the user described"),
    How.MODEL: (0.85, "read by a language model"),
}
ABOUT_SOMEONE_ELSE = (0.9, "about someone the user named, as the user told it")


@dataclass(frozen=True)
class Span:
    """Character offsets of the sentence a fact was stated in, within the text said."""

    start: int
    end: int


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str
    statement: str
    message: int | None = None  # the conversation's message it was stated in
    ends: bool = False  # the statement says the value ended
    how: How = How.DIRECT
    span: Span | None = None

    @property
    def content(self) -> tuple[str, str, str, bool]:
        return (self.subject, self.predicate, self.object, self.ends)


@dataclass(frozen=True)
class Said:
    """Something the user said: a memory's content (`message` None) or one of the user's
    messages of a conversation (its 0-based index among all the messages)."""

    text: str
    message: int | None = None


class Extractor(Protocol):
    def extract(self, said: Sequence[Said]) -> list[Triple]: ...


def statement(subject: str, predicate: str, obj: str, ends: bool = False) -> str:
    """ "The user lives in Lisbon", "The user's sister no longer lives in Lisbon"."""
    who = "The " + subject
    if ends:
        predicate = (
            predicate.replace("is", "is no longer", 1)
            if predicate == "is" or predicate.startswith("is ")
            else "no longer " + predicate
        )
    return f"{who} {predicate} {obj}"


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
    return range_for(triple.message, window, body.messages)


def stated_at(triple: Triple, source: Source) -> int:
    """When it was said: its message's `sent_at`, else the memory's `observed_at`."""
    messages = source.body.messages
    if triple.message is not None and 0 <= triple.message < len(messages):
        sent = messages[triple.message].sent_at_us
        if sent:
            return sent
    return source.observed_at_us or source.created_at_us


# Confidence by how the memory came to be saved.
_CONFIDENCE = {
    "explicit_user_request": (0.9, "the user asked to remember it"),
    "user_confirmed": (0.85, "the user confirmed saving it"),
    "client_auto_save": (0.6, "saved by a client's auto-save without the user's confirmation"),
    "": (0.5, "stored without a save intent"),
}


def confidence(save_intent: str, triple: Triple | None = None) -> tuple[float, str]:
    """How sure agentmem is of a fact, and why: by how the memory was saved, then by how
    the fact was read from it (and whether it is about someone other than the user)."""
    level, reason = _CONFIDENCE.get(save_intent, _CONFIDENCE[""])
    if triple is None:
        return level, reason
    factors = [HOW[triple.how]]
    if triple.subject != "user":
        factors.append(ABOUT_SOMEONE_ELSE)
    for factor, why in factors:
        level *= factor
        reason += f"; {why}"
    return round(level, 4), reason


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
    valid_from_us: int = 0  # when it was stated
    link: Link = NONE  # its place in its attribute's chain
    retracted_at_us: int = 0

    @property
    def valid_to_us(self) -> int:
        return self.link.valid_to_us

    @property
    def superseded_by(self) -> str:
        return self.link.superseded_by
