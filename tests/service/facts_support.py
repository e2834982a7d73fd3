"""Statements at given times, and the facts they make current, through the use cases (the
service tier's twin of `tests.fact_time_helpers`)."""

from __future__ import annotations

from runtime_svc.composition import UseCases
from runtime_svc.domain.answers import Answer
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.fact_chains import Period
from runtime_svc.domain.facts import Fact
from runtime_svc.domain.sources import SaveIntent
from runtime_svc.services.facts import FactQuery
from runtime_svc.services.inserts import InsertCommand, Inserted
from tests.fact_time_helpers import DAY, T0
from tests.service.wiring import caller

A = caller()


def at_us(day: float) -> int:
    return int(T0 + day * DAY) * 1_000_000


def day_of(us: int) -> float | None:
    """The test calendar's day of a time in µs (None: 0, not set)."""
    return None if us == 0 else (us / 1_000_000 - T0) / DAY


def say(cases: UseCases, text: str, day: float, intent: str = "", who: Caller = A) -> Inserted:
    """Inserts `text` as said on `day`."""
    cmd = InsertCommand(content=text, observed_at_us=at_us(day), intent=SaveIntent(intent))
    return cases.inserts.insert(who, cmd)


def insert(cases: UseCases, text: str, intent: str = "") -> Inserted:
    return cases.inserts.insert(A, InsertCommand(content=text, intent=SaveIntent(intent)))


def search(
    cases: UseCases, query: str = "", *, as_of: float | None = None, history: bool = False
) -> list[Fact]:
    period = Period(0 if as_of is None else at_us(as_of), history)
    return cases.facts.search(A, FactQuery(query=query, limit=100, period=period))


def values(cases: UseCases, query: str = "", **kw: object) -> list[tuple[str, str, str]]:
    """(subject, predicate, object) of the facts a search returns, sorted."""
    found = search(cases, query, **kw)  # type: ignore[arg-type]
    return sorted((f.triple.subject, f.triple.predicate, f.triple.object) for f in found)


def history(
    cases: UseCases, subject: str, predicate: str
) -> list[tuple[str, float | None, float | None]]:
    """An attribute's intervals in time order: (object, from day, to day or None)."""
    found = [
        f
        for f in search(cases, history=True)
        if (f.triple.subject, f.triple.predicate) == (subject, predicate)
    ]
    return [(f.triple.object, day_of(f.valid_from_us), day_of(f.valid_to_us)) for f in found]


def fact_of(cases: UseCases, obj: str) -> Fact:
    (found,) = [f for f in search(cases, history=True) if f.triple.object == obj]
    return found


def ask(cases: UseCases, question: str, as_of: float | None = None) -> Answer:
    return cases.facts.ask(A, question, 300, 0 if as_of is None else at_us(as_of))
