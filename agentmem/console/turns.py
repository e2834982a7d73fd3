"""A conversation as a page shows it: whole while it is short; when long, its first and last
turns, the turns a search matched (with one on each side) and the rest folded into
"show N more" (`<details>`), so a 500-turn conversation is a page a person can read and a
browser lays out at once. A matched passage is marked; of a long message, the characters
that matched. Text is cut only at the passage's bounds: what is shown is what is stored
(the page writes invisible characters out and escapes the rest)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agentmem.v1 import retrieval_pb2, sources_pb2

SHORT = 12  # conversations of at most this many turns are shown whole
HEAD = 2  # the first turns, always shown
TAIL = 3  # the last turns (the newest, a pending append's), always shown
AROUND = 1  # turns shown on each side of a matched one
# A passage in a page's address (the "Why retrieved?" page links to it): 0-based messages,
# inclusive, and a part's characters: "12-13", "3-3:1200-2400".
_PASSAGE = re.compile(r"(\d{1,9})-(\d{1,9})(?::(\d{1,9})-(\d{1,9}))?")


@dataclass(frozen=True)
class Turn:
    number: int  # 1-based, as the page names it
    speaker: str
    pieces: tuple[tuple[str, bool], ...]  # the text in pieces, each marked as matched or not
    matched: bool = False


@dataclass(frozen=True)
class Fold:
    turns: tuple[Turn, ...]


def where(p: retrieval_pb2.Passage) -> str:
    """The passage in words: "messages 13 to 14", "message 3, characters 1,201 to 2,400"."""
    first, last = p.message_start + 1, p.message_end + 1
    if p.char_end > p.char_start:
        return f"message {first}, characters {p.char_start + 1:,} to {p.char_end:,}"
    return f"message {first}" if first == last else f"messages {first} to {last}"


def parse(value: str) -> retrieval_pb2.Passage | None:
    """The passage an address names (None: none, or not one)."""
    m = _PASSAGE.fullmatch(value)
    if m is None:
        return None
    start, end, c0, c1 = (int(g) if g else 0 for g in m.groups())
    if end < start or c1 < c0 or (c1 and start != end):
        return None
    return retrieval_pb2.Passage(message_start=start, message_end=end, char_start=c0, char_end=c1)


def matched_turns(p: retrieval_pb2.Passage | None) -> range:
    return range(p.message_start, p.message_end + 1) if p is not None else range(0)


def turn(i: int, m: sources_pb2.Message, passage: retrieval_pb2.Passage | None) -> Turn:
    speaker = f"{m.name} ({m.role})" if m.name else m.role
    matched = i in matched_turns(passage)
    text = m.content
    if not matched or passage is None:
        return Turn(i + 1, speaker, ((text, False),))
    start, end = passage.char_start, passage.char_end
    if not end > start:  # the whole message: the turn is marked, not its text
        return Turn(i + 1, speaker, ((text, False),), matched=True)
    pieces = ((text[:start], False), (text[start:end], True), (text[end:], False))
    return Turn(i + 1, speaker, tuple(p for p in pieces if p[0]), matched=True)


def kept(count: int, wanted: Iterable[int]) -> set[int]:
    """The turns a long conversation shows unfolded (0-based)."""
    keep = set(range(min(HEAD, count))) | set(range(max(0, count - TAIL), count))
    for i in wanted:
        keep |= set(range(max(0, i - AROUND), min(count, i + AROUND + 1)))
    return keep


def shown(
    messages: Sequence[sources_pb2.Message], passage: retrieval_pb2.Passage | None = None
) -> list[Turn | Fold]:
    """The turns in order, runs of those not kept folded (whole when short)."""
    turns = [turn(i, m, passage) for i, m in enumerate(messages)]
    if len(turns) <= SHORT:
        return list(turns)
    keep = kept(len(turns), matched_turns(passage))
    return folded(turns, lambda t: t.number - 1 in keep, Fold)


T = TypeVar("T")
F = TypeVar("F")


def folded(
    items: Iterable[T], open_: Callable[[T], bool], fold: Callable[[tuple[T, ...]], F]
) -> list[T | F]:
    """The items in order, each run of those not `open_` made one `fold` (a run of one is
    shown: "show 1 more" would take as much room as the item)."""
    out: list[T | F] = []
    run: list[T] = []

    def flush() -> None:
        out.extend(run if len(run) == 1 else [fold(tuple(run))] if run else [])
        run.clear()

    for item in items:
        if open_(item):
            flush()
            out.append(item)
        else:
            run.append(item)
    flush()
    return out
