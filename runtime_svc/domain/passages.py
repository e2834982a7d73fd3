"""Passages: the retrievable pieces of a conversation.

Each message of a conversation is one passage, together with its context window (by default
the message before it) and the conversation's date (from the first `sent_at` given). A
passage is named by its message range (0-based, inclusive). A plain-text memory is one
entry without a range.

The search index keys each entry by its source and range (`runtime_svc.domain.entry_keys`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from runtime_svc.domain import tails
from runtime_svc.domain.sources import Body, Message


@dataclass(frozen=True)
class Window:
    """`before`: how many previous messages each passage includes; `date`: whether the
    conversation's date heads each passage; `reply`: whether a message that asks something
    (`asks`) includes the next message, the answer, in its passage."""

    before: int = 1
    date: bool = True
    reply: bool = True


@dataclass(frozen=True)
class Range:
    start: int
    end: int  # inclusive


@dataclass(frozen=True)
class Part:
    """Characters of one message: [start, end)."""

    start: int
    end: int  # exclusive


@dataclass(frozen=True)
class Passage:
    range: Range
    text: str


def line(speaker: str, content: str) -> str:
    return f"{speaker}: {content}"


def date_of(messages: Sequence[Message]) -> str:
    return date_of_time(tails.first_sent_at_us(messages))


DAY_S = 86_400
DAY_US = DAY_S * 1_000_000


def date_of_time(sent_at_us: int) -> str:
    """The UTC day of a time, as a passage's date line ("" for none)."""
    return _day(sent_at_us // DAY_US) if sent_at_us else ""


@lru_cache(maxsize=4096)
def _day(day: int) -> str:
    """Cached by day, not by time: every conversation of one day shares one entry."""
    return datetime.fromtimestamp(day * DAY_S, UTC).strftime("%d %B %Y")


def render(messages: Sequence[Message], rng: Range, window: Window) -> str:
    """A passage's text: the date line (when given and asked for), then its messages, each
    as `speaker: text` (the speaker's name, else the role)."""
    shown = [(m.speaker, m.content) for m in messages[rng.start : rng.end + 1]]
    return _render(shown, date_of(messages) if window.date else "")


Decoded = tuple[tuple[tuple[str, str], ...], int]


def render_stored(raw: str, rng: Range, window: Window, decoded: Decoded | None = None) -> str:
    """`render` from the conversation's stored form (a search hit's passage), or from that
    form `decoded` already (`Body.decoded`)."""
    lines, sent_at_us = decoded if decoded is not None else Body.decoded(raw)
    shown = lines[rng.start : rng.end + 1]
    return _render(shown, date_of_time(sent_at_us) if window.date else "")


def _render(shown: Sequence[tuple[str, str]], head: str) -> str:
    body = "\n".join(line(speaker, content) for speaker, content in shown)
    return f"{head}\n{body}" if head else body


def asks(content: str) -> bool:
    """Whether a message asks something (the message after it then likely answers)."""
    return "?" in content


def range_for(message: int, window: Window, messages: Sequence[Message] = ()) -> Range:
    """The range of the passage of one message: up to `window.before` messages before it,
    and with `window.reply` the next one when this one asks something."""
    reply = window.reply and message + 1 < len(messages) and asks(messages[message].content)
    return Range(max(0, message - window.before), message + reply)


def own_message(rng: Range, contents: Sequence[str], window: Window) -> int:
    """The message whose passage `rng` is (the others are its context or its reply), as
    `derive` makes them: a passage that ends with the reply to a question is its question's."""
    if rng.start > 0 and rng.start + window.before <= rng.end:
        return rng.start + window.before
    before_last = rng.end - 1
    if window.reply and before_last >= rng.start and asks(contents[before_last]):
        return before_last
    return rng.end


# A passage's other messages (its context and its reply) are indexed by at most this many
# characters, those nearest its own message: a coding session's replies run to thousands of
# characters, and a user's message indexed with all of the reply before it would rank as
# that reply does.
CONTEXT_CHARS = 600


def derive(messages: Sequence[Message], window: Window, first: int = 0) -> list[Passage]:
    """One passage per message (`range_for`); a range two messages share (at the start of
    the conversation) is one passage, the first message's. `first`: the passages of the
    messages from there on only (those an append added; the others' stay as they are)."""
    out, seen = [], set()
    for i in range(first, len(messages)):
        rng = range_for(i, window, messages)
        if rng not in seen:
            seen.add(rng)
            out.append(Passage(rng, indexed_text(messages, rng, window, i)))
    return out


def indexed_text(
    messages: Sequence[Message], rng: Range, window: Window, own: int | None = None
) -> str:
    """The text a passage is indexed (and embedded) from: `render`, its messages other than
    its own (`own`, else `own_message`) by their characters nearest it (`CONTEXT_CHARS`)."""
    if own is None:
        own = own_message(rng, [m.content for m in messages], window)
    shown = [
        (m.speaker, _near(m.content, j - own))
        for j, m in enumerate(messages[rng.start : rng.end + 1], start=rng.start)
    ]
    return _render(shown, date_of(messages) if window.date else "")


def _near(content: str, offset: int) -> str:
    """A message as its passage `offset` messages away indexes it: whole when it is the
    passage's own (0), else its characters nearest that message (`CONTEXT_CHARS`)."""
    if offset == 0 or len(content) <= CONTEXT_CHARS:
        return content
    return content[-CONTEXT_CHARS:] if offset < 0 else content[:CONTEXT_CHARS]
