"""A conversation's tail: its last messages and its size, without the rest.

An append needs no more of a stored session than that: the messages the new ones' passages
show as context (`passages.Window.before`), how many messages and characters it holds (its
limits, the new messages' places), and the first `sent_at` any message gives (a passage's
date). A `Tail` stands for the whole conversation where those are all that is read: its
length is the conversation's, and indexing before what it holds is an error (never a
silently wrong message).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from runtime_svc.domain.sources import Message


class Tail(Sequence[Message]):
    def __init__(
        self, length: int, held: Sequence[Message], chars: int, first_sent_at_us: int
    ) -> None:
        """`held`: the conversation's last messages; `chars`: the characters of all of its
        messages."""
        self.length, self.held, self.chars = length, tuple(held), chars
        self.offset = length - len(self.held)  # the place of the first held message
        self.first_sent_at_us = first_sent_at_us

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, i: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.length)
            if step != 1 or (start < self.offset and start < stop):
                raise IndexError("a conversation's tail holds its last messages only")
            return self.held[max(start, self.offset) - self.offset : stop - self.offset]
        j = i + self.length if i < 0 else i
        if not self.offset <= j < self.length:
            raise IndexError("a conversation's tail holds its last messages only")
        return self.held[j - self.offset]

    def __iter__(self) -> Iterator[Message]:
        raise TypeError("a conversation's tail is not the whole conversation")

    def __add__(self, more: Sequence[Message]) -> Tail:
        """The conversation with `more` appended (held, with what this holds)."""
        first_sent = self.first_sent_at_us or next((m.sent_at_us for m in more if m.sent_at_us), 0)
        chars = self.chars + sum(len(m.content) for m in more)
        return Tail(self.length + len(more), self.held + tuple(more), chars, first_sent)

    def added(self, before: int) -> tuple[Message, ...]:
        """The messages from place `before` on (those an append added)."""
        return self[before:]


def chars(messages: Sequence[Message]) -> int:
    """The characters of a conversation's messages."""
    return messages.chars if isinstance(messages, Tail) else sum(len(m.content) for m in messages)


def first_sent_at_us(messages: Sequence[Message]) -> int:
    """The first `sent_at` a conversation's messages give (0: none)."""
    if isinstance(messages, Tail):
        return messages.first_sent_at_us
    return next((m.sent_at_us for m in messages if m.sent_at_us), 0)
