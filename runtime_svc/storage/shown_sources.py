"""What a search hit shows of its source, as read when the source's eligibility was checked.

A transaction keeps these rows by source pk (`Transaction.shown`), so that both sides of a
hybrid search, and the prompt block after them, read a long session's row once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShownSource:
    pk: int
    source_id: str
    revision: int
    generated_form: str
    save_intent: str
    kind: str
    raw: str
