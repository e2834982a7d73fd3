"""What a prompt block takes first of each ranked passage, before any passage's context.

A passage of short messages is taken whole (with the reply to its question). A passage
holding a message over `LONG_CHARS` (a coding session's replies run to thousands of
characters) gives first its exchange, each message by its best part of at most
`FIRST_PART_CHARS`: its message that shares a query word, the shortest such (in a session
between a user and an assistant, the user's own message, which states what the question asks
about), and the passage's own message, the one it was ranked for (often the reply that holds
the answer). The rest of the passage comes later, when every ranked passage has had its first
pick, and what room is left then shows each first pick by its larger part (`assembly`'s
`grow`). One long reply never crowds the evidence of the passages after it out of the budget,
and many small cited parts fit where a few long ones did.

BEAM-dev (all ten chats), hybrid, at 2,000 / 4,000 tokens: the shortest matching message
alone 0.637 / 0.704; with the own message beside it 0.659 / 0.754; the own message alone
(lexical) 0.598 / 0.709 against 0.626 / 0.670. Part sizes (lexical, chats 1-5, at 1,000 /
2,000 / 4,000, the shortest message alone): 0.433 / 0.567 / 0.656 at 600 characters, 0.511 /
0.611 / 0.667 at 300, 0.589 / 0.656 / 0.689 at 200, 0.600 / 0.667 / 0.689 at 150.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runtime_svc.assembly.message_parts import PART_CHARS

LONG_CHARS = 600  # a passage holding a message over this gives a first pick
FIRST_PART_CHARS = 200  # the first pick's part at most


def first_pick(
    lines: Sequence[tuple[str, str]],
    messages: Sequence[int],
    own: int,
    matches: Callable[[int], bool],
) -> tuple[list[list[int]], int]:
    """What to take first of a passage (`messages`, its own message `own`), in order of
    preference (the first that fits the room left is taken: near the end of the budget, the
    matching message alone), and the part limit they are shown with; `lines`: the
    conversation's (speaker, content); `matches`: whether a message holds one of the
    query's words (`message_parts.shared`), asked of the shortest messages first, until one
    does."""
    inside = [i for i in messages if 0 <= i < len(lines)]
    if all(len(lines[i][1]) <= LONG_CHARS for i in inside):
        return [list(messages)], PART_CHARS
    ordered = sorted(inside, key=lambda i: (len(lines[i][1]), i != own))
    shortest = next((i for i in ordered if matches(i)), ordered[0])
    exchange = sorted({shortest, own} & set(inside))
    return ([exchange, [shortest]] if len(exchange) > 1 else [exchange]), FIRST_PART_CHARS
