"""Interval chains: which statement of an attribute was current when.

The statements of one attribute (`attributes.AttributeKey`), in the order of their time
(`valid_from_us`: the memory's `observed_at`, a message's `sent_at`; ties in the order they
were stored), form a chain of intervals. Only *live* statements take part: those of an
eligible source that the user has not retracted. So the lifecycle decides what is current:
erasing, revoking, making cold or leaving pending the newest statement re-exposes the one
before it, and making it active again restores it.

- A statement of a new value opens an interval and closes the open one at its own time
  (`valid_to_us`, `superseded_by`). A statement made late with an earlier time takes its
  place in the order: it closes what came before it and is closed by what came after.
- A statement of the value already current (compared by `attributes.value_key`) opens no
  interval: the value was already known.
- A statement that a value ended ("I no longer live in Lisbon") closes the open interval if
  it holds that value, and opens none.

This module is pure: storage loads the statements and saves the links
(`runtime_svc.services.fact_chains` is the one writer).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    fact_id: str
    value: str  # the object as compared (`attributes.value_key`)
    valid_from_us: int  # > 0: a time of 0 would read as "still current" once it closed one
    seq: int  # the order it was stored in: breaks ties of time
    ends: bool = False  # a statement that the value ended
    live: bool = True  # of an eligible source, and not retracted
    source_id: str = ""


@dataclass(frozen=True)
class Link:
    """Where a statement stands in its attribute's chain. A statement that opens no
    interval (not live, a restatement, an end) has the default link."""

    opens: bool = False
    valid_to_us: int = 0  # 0: still current
    superseded_by: str = ""  # the statement that closed its interval
    superseded_by_source: str = ""  # … and its source (a purge finds the link by it)
    supersedes: str = ""  # the statement whose value was current before this one


NONE = Link()


def chain(statements: Iterable[Statement]) -> dict[str, Link]:
    """Every statement's link, by fact id (statements of one attribute)."""
    ordered = sorted(statements, key=lambda s: (s.valid_from_us, s.seq, s.fact_id))
    links = {s.fact_id: NONE for s in ordered}
    current: Statement | None = None  # the statement whose interval is open
    previous = ""  # the last statement that opened an interval
    for s in ordered:
        if not s.live:
            continue
        same = current is not None and current.value == s.value
        if s.ends:
            if current is not None and (same or not s.value):
                links[current.fact_id] = _closed(links[current.fact_id], s)
                current = None
            continue
        if same:
            continue
        if current is not None:
            links[current.fact_id] = _closed(links[current.fact_id], s)
        links[s.fact_id] = Link(opens=True, supersedes=previous)
        current, previous = s, s.fact_id
    return links


def _closed(link: Link, by: Statement) -> Link:
    return Link(True, by.valid_from_us, by.fact_id, by.source_id, link.supersedes)


@dataclass(frozen=True)
class Period:
    """Which statements of the chains a read returns: the current values (the default),
    those current at `as_of_us`, or with `history` every interval (that began by
    `as_of_us`, when given)."""

    as_of_us: int = 0
    history: bool = False


NOW = Period()  # the current values


def current_at(link: Link, valid_from_us: int, at_us: int) -> bool:
    """Whether a statement with this link was the current value at `at_us`."""
    return (
        link.opens
        and valid_from_us <= at_us
        and (link.valid_to_us == 0 or link.valid_to_us > at_us)
    )
