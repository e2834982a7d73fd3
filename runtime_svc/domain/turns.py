"""A conversation's turns and whose each is: the messages it was inserted with are its
inserter's, each append's are its appender's. Attribution (the inbox, GetSource, the
console), self-approval and a partial erasure (`erase_appended`) follow the turn. A partial
erasure of the inserter's messages empties the inserted part: the conversation then starts
with its first kept append (at message 0), and stays attributed to its inserter in its
provenance (who started it), with no message of theirs left.

Pure: a turn is known by the place of its first message, the revision it made and who
appended it; how many messages it holds follows from the next turn's place (or the
conversation's size), so no turn's text is read to attribute it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from runtime_svc.domain.sources import Message


@dataclass(frozen=True)
class TurnTrust:
    """What an append's messages were given: the save intent its append claimed, whether
    that claim was held (not one the appender's credential is trusted for), and whether
    the append held the conversation for review (`held`: the insert policy, the claim, or
    its text, `hold_reason` "instruction_like"). A conversation already pending that an
    append leaves pending was not held by it."""

    save_intent: str = ""
    save_intent_held: bool = False
    held: bool = False
    hold_reason: str = ""


@dataclass(frozen=True)
class TurnRecord:
    """One append as stored: where its first message is, the revision it made, who
    appended it and the trust its append was given."""

    first_message: int
    revision: int
    principal_id: str
    principal_kind: str
    trust: TurnTrust = field(default_factory=TurnTrust)


@dataclass(frozen=True)
class AppendedTurn:
    """One append, attributed: its messages' place and number, whose they are, and the
    trust its append was given."""

    first_message: int
    message_count: int
    revision: int
    principal_id: str
    principal_kind: str
    trust: TurnTrust = field(default_factory=TurnTrust)


def attributed(records: Sequence[TurnRecord], total_messages: int) -> tuple[AppendedTurn, ...]:
    """The appends of a conversation of `total_messages` messages, in order, each with how
    many messages it added."""
    ordered = sorted(records, key=lambda r: r.first_message)
    if not ordered:
        return ()
    ends = [r.first_message for r in ordered[1:]] + [total_messages]
    return tuple(
        AppendedTurn(
            r.first_message,
            max(0, end - r.first_message),
            r.revision,
            r.principal_id,
            r.principal_kind,
            r.trust,
        )
        for r, end in zip(ordered, ends, strict=True)
    )


@dataclass(frozen=True)
class TurnErasure:
    """What erasing one principal's turns leaves: the conversation's messages without
    theirs, each kept turn at its new place, and what went (`inserted_erased`: the messages
    the conversation was inserted with went too, counted as one turn)."""

    principal_id: str  # whose turns went
    messages: tuple[Message, ...]
    kept: tuple[tuple[AppendedTurn, int], ...]  # (a kept turn, its new first message)
    turns_erased: int
    messages_erased: int
    inserted_erased: bool = False


def erase_appended(
    messages: Sequence[Message],
    turns: Sequence[AppendedTurn],
    principal_id: str,
    inserted_by: str = "",
) -> TurnErasure:
    """The conversation without the turns `principal_id` wrote: each it appended, and, when
    it is the conversation's inserter (`inserted_by`), the messages it was inserted with
    (the inserted part, counted as one turn). What the others appended stays, in order."""
    first = turns[0].first_message if turns else len(messages)
    inserted_erased = bool(principal_id) and principal_id == inserted_by and first > 0
    out = [] if inserted_erased else list(messages[:first])
    kept: list[tuple[AppendedTurn, int]] = []
    erased_turns = erased_messages = 0
    if inserted_erased:
        erased_turns, erased_messages = 1, first
    for t in turns:
        if t.principal_id == principal_id:
            erased_turns += 1
            erased_messages += t.message_count
            continue
        kept.append((t, len(out)))
        out += messages[t.first_message : t.first_message + t.message_count]
    return TurnErasure(
        principal_id, tuple(out), tuple(kept), erased_turns, erased_messages, inserted_erased
    )
