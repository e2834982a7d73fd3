"""Which messages of a ranked passage a prompt block looks at: the passage's own message,
its messages with the reply to its question, and the one speaker a query names."""

from __future__ import annotations

import re
from collections.abc import Sequence

from runtime_svc.assembly.candidates import Candidate
from runtime_svc.domain.passages import Window, asks, own_message


def own_of(c: Candidate, window: Window) -> int | None:
    """A passage's own message (`passages.own_message`)."""
    if c.passage is None or c.conversation is None:
        return None
    contents = [content for _, content in c.conversation.lines]
    return own_message(c.passage, contents, window)


def with_reply(c: Candidate, own: int | None) -> list[int]:
    """The passage's messages, and the next one when its own message (`own`) asks something
    (a passage indexed with its reply holds it already)."""
    if c.passage is None or c.conversation is None or own is None:
        return []
    reply = [own + 1] if asks(c.conversation.lines[own][1]) else []
    return [*range(c.passage.start, c.passage.end + 1), *reply]


def named_speaker(candidates: Sequence[Candidate], query: str) -> str:
    """The one speaker of the candidates' conversations the query names ("" for none or
    several): names are matched as whole words, case kept."""
    speakers = {
        speaker
        for c in candidates
        if c.conversation is not None
        for speaker, _ in c.conversation.lines
    }
    named = [s for s in speakers if s and re.search(rf"(?<!\w){re.escape(s)}(?!\w)", query)]
    return named[0] if len(named) == 1 else ""
