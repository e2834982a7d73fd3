"""A conversation's messages grouped by whose they are, for the inbox and the source page:
the messages it was inserted with are its inserter's, each append's its appender's. A person
reviewing a held conversation sees whose text waits, message by message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentmem.v1 import sources_pb2


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

    @property
    def places(self) -> str:
        """Its messages' numbers as a person counts them (from 1)."""
        last = self.first + self.count
        return f"message {last}" if self.count == 1 else f"messages {self.first + 1} to {last}"


def parts(
    messages: Sequence[sources_pb2.Message],
    turns: Sequence[sources_pb2.AppendedTurn],
    inserted_by: str,
    inserted_kind: str = "",
) -> list[Part]:
    """The conversation's parts in order (messages only when the caller may read them)."""
    first = turns[0].first_message if turns else len(messages)
    out = [Part(inserted_by, inserted_kind, False, 0, first, messages=list(messages[:first]))]
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
            )
        )
    return [p for p in out if p.count]
