"""What prompt assembly is given: the ranked passages (each with its whole conversation) and
plain-text memories of a query, best first (`block.assemble` chooses among them)."""

from __future__ import annotations

from dataclasses import dataclass

from runtime_svc.domain.passages import Range, date_of_time
from runtime_svc.domain.sources import Body


@dataclass(frozen=True)
class Conversation:
    """A conversation source's messages as (speaker, content), and its session date."""

    lines: tuple[tuple[str, str], ...]
    date: str = ""


def conversation(raw: str, dated: bool = True) -> Conversation:
    """A conversation from its stored form (`dated`: with its session date)."""
    lines, sent_at_us = Body.stored_lines(raw, 0, len(raw))
    return Conversation(tuple(lines), date_of_time(sent_at_us) if dated else "")


@dataclass(frozen=True)
class Candidate:
    """A ranked passage (or, `passage` None, a plain-text memory with its `text`)."""

    source_id: str
    revision: int
    text: str
    passage: Range | None = None
    conversation: Conversation | None = None
    said: str = ""  # a plain-text memory's date (its observed_at), "" for none
    superseded: bool = False  # a plain-text memory whose every fact a later one replaced
