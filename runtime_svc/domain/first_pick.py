"""What a prompt block takes first of each ranked passage, before any passage's context.

A passage of short messages is taken whole (with the reply to its question). A passage
holding a long message (a coding session's replies run to thousands of characters) gives
first only its message that shares a query word, the shortest such (in a session between a
user and an assistant, the user's own message, which states what the question asks about),
by its best part of at most `FIRST_PART_CHARS`; the rest of the passage comes later, when
every ranked passage has had its first pick. One long reply never crowds the evidence of
the passages after it out of the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runtime_svc.domain.message_parts import PART_CHARS

FIRST_PART_CHARS = 600


def first_pick(
    lines: Sequence[tuple[str, str]],
    messages: Sequence[int],
    own: int,
    matches: Callable[[int], int],
) -> tuple[list[int], int]:
    """The messages to take first of a passage (`messages`, its own message `own`) and the
    part limit they are shown with; `lines`: the conversation's (speaker, content);
    `matches`: how many of the query's words a message holds (`message_parts.shared`)."""
    inside = [i for i in messages if 0 <= i < len(lines)]
    if all(len(lines[i][1]) <= FIRST_PART_CHARS for i in inside):
        return list(messages), PART_CHARS
    return [
        min(inside, key=lambda i: (matches(i) == 0, len(lines[i][1]), i != own))
    ], FIRST_PART_CHARS
