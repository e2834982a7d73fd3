"""A conversation's messages grouped by whose they are, for the inbox and the source page:
the messages it was inserted with are its inserter's, each append's its appender's. A person
reviewing a held conversation sees whose text waits, message by message. A long one folds as
`agentmem.console.turns` folds a conversation, part by part: the parts holding its first and
last turns and the matched passage stay open, the runs of parts between them fold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentmem.console import turns as shown_turns
from agentmem.v1 import retrieval_pb2, sources_pb2


@dataclass(frozen=True)
class Part:
    """Consecutive messages one principal added: at insert, or in one append."""

    by: str
    kind: str  # the principal's kind ("" when not known, as for the inserter's part here)
    appended: bool
    first: int  # the place of its first message (from 0)
    count: int
    save_intent: str = ""
    revision: int = 0
    messages: list[sources_pb2.Message] = field(default_factory=list)
    # An append's trust: its claim held, and whether (and why) it held the conversation.
    save_intent_held: bool = False
    held: bool = False
    hold_reason: str = ""
    lines: tuple[shown_turns.Turn, ...] = ()  # its messages as the page shows them

    @property
    def places(self) -> str:
        """Its messages' numbers as a person counts them (from 1)."""
        last = self.first + self.count
        return f"message {last}" if self.count == 1 else f"messages {self.first + 1} to {last}"


@dataclass(frozen=True)
class PartFold:
    """A run of parts folded away."""

    parts: tuple[Part, ...]

    @property
    def places(self) -> str:
        first, last = self.parts[0], self.parts[-1]
        return Part("", "", False, first.first, last.first + last.count - first.first).places


def parts(
    messages: Sequence[sources_pb2.Message],
    turns: Sequence[sources_pb2.AppendedTurn],
    inserted_by: str,
    inserted_kind: str = "",
    passage: retrieval_pb2.Passage | None = None,
) -> list[Part | PartFold]:
    """The conversation's parts in order (messages only when the caller may read them),
    runs of them folded when the conversation is long."""
    whole = _parts(messages, turns, inserted_by, inserted_kind, passage)
    count = max(len(messages), sum(p.count for p in whole))
    if count <= shown_turns.SHORT:
        return list(whole)
    keep = shown_turns.kept(count, shown_turns.matched_turns(passage))

    def open_(p: Part) -> bool:  # a holding append, or a part holding a kept turn
        return p.held or bool(keep & set(range(p.first, p.first + p.count)))

    return shown_turns.folded(whole, open_, PartFold)


def _parts(
    messages: Sequence[sources_pb2.Message],
    turns: Sequence[sources_pb2.AppendedTurn],
    inserted_by: str,
    inserted_kind: str,
    passage: retrieval_pb2.Passage | None,
) -> list[Part]:
    def lines(first: int, end: int) -> tuple[shown_turns.Turn, ...]:
        return tuple(
            shown_turns.turn(i, messages[i], passage) for i in range(first, min(end, len(messages)))
        )

    first = turns[0].first_message if turns else len(messages)
    out = [
        Part(
            inserted_by,
            inserted_kind,
            False,
            0,
            first,
            messages=list(messages[:first]),
            lines=lines(0, first),
        )
    ]
    for t in turns:
        end = t.first_message + t.message_count
        out.append(
            Part(
                t.appended_by,
                t.appender_kind,
                True,
                t.first_message,
                t.message_count,
                t.save_intent,
                t.revision,
                list(messages[t.first_message : end]),
                t.save_intent_held,
                t.held,
                t.hold_reason,
                lines(t.first_message, end),
            )
        )
    return [p for p in out if p.count]
