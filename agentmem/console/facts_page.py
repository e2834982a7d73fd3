"""The facts page: what agentmem holds true about the person now (each value with the date it
became current), how each attribute changed over time, the facts a search finds, and a
"this is wrong" button per current value (RetractFact, CSRF-checked like every form)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agentmem.console.gateway_values import GatewayError
from agentmem.console.web import console, done, form, refused, render, signed_in

MAX_QUERY = 500
MAX_REASON = 200


@dataclass(frozen=True)
class Value:
    fact_id: str
    text: str
    since: str  # the day it became current


@dataclass(frozen=True)
class Row:
    key: str  # "user lives in"
    confidence: float
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Interval:
    value: str
    start: str
    end: str  # "" while current
    replaced_by: str  # the fact that ended it


@dataclass(frozen=True)
class Attribute:
    key: str
    intervals: tuple[Interval, ...]


def day(ts: Any) -> str:
    """A Timestamp as its UTC day ("" when unset)."""
    if not (ts.seconds or ts.nanos):
        return ""
    return str(ts.ToDatetime().date())


def current_rows(entries: Sequence[Any], facts: Sequence[Any]) -> list[Row]:
    """The profile's entries, each value with its fact (to retract) and its date."""
    by_id = {f.fact_id: f for f in facts}
    rows = []
    for e in entries:
        values = tuple(
            Value(f.fact_id, f.object, day(f.valid_from))
            for f in (by_id.get(i) for i in e.fact_ids)
            if f is not None
        )
        rows.append(Row(e.key, e.confidence, values))
    return rows


def _when(f: Any) -> tuple[int, int]:
    """In time order; two statements at one time make an empty interval, listed first."""
    end = f.valid_to.ToMicroseconds() if f.HasField("valid_to") else 2**63
    return (f.valid_from.ToMicroseconds(), end)


def histories(facts: Sequence[Any]) -> list[Attribute]:
    """The attributes that changed: their intervals in time order."""
    groups: dict[str, list[Any]] = {}
    for f in facts:
        groups.setdefault(f"{f.subject} {f.predicate}", []).append(f)
    out = []
    for key, found in sorted(groups.items()):
        found.sort(key=_when)
        if len(found) > 1 or found[0].superseded_by:
            intervals = tuple(
                Interval(f.object, day(f.valid_from), day(f.valid_to), f.superseded_by)
                for f in found
            )
            out.append(Attribute(key, intervals))
    return out


async def facts(request: Request) -> Response:
    session = signed_in(request)
    query = request.query_params.get("q", "").strip()[:MAX_QUERY]
    source = request.query_params.get("save_intent_source", "").strip()[:64]
    gateway = console(request).gateway
    try:
        found = await gateway.facts(session.token, query, source)
        current = await gateway.facts(session.token, "", source, limit=100)
        history = await gateway.facts(session.token, "", source, limit=100, history=True)
        profile = await gateway.profile(session.token, source)
    except GatewayError as e:
        return refused(request, session, e, back="/inbox")
    return render(
        request,
        "facts.html",
        session,
        query=query,
        source=source,
        facts=found,
        rows=current_rows(profile.entries, current.facts),
        histories=histories(history.facts),
        day=day,
    )


async def retract(request: Request) -> Response:
    """The person says a fact is wrong: it leaves every answer, the value before it is
    current again, and the memory it came from stays."""
    session, data = await form(request)
    fact_id = request.path_params["fact_id"]
    reason = str(data.get("reason", ""))[:MAX_REASON]
    try:
        await console(request).gateway.retract_fact(session.token, fact_id, reason)
    except GatewayError as e:
        return refused(request, session, e, back="/facts")
    return done(
        session,
        f"Retracted fact {fact_id}: it leaves every answer; the value before it is current again.",
        "/facts",
    )
