"""Statements at given times, and the facts they make current, through the public API."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import facts_pb2, sources_pb2

DAY = 86_400
T0 = 1_700_000_000  # 2023-11-14: day 0 of the tests' calendars


def at(day: float) -> Timestamp:
    return Timestamp(seconds=int(T0 + day * DAY))


def day_of(ts: Timestamp) -> float | None:
    """The test calendar's day of a timestamp field (None: unset)."""
    return None if ts.seconds == 0 and ts.nanos == 0 else (ts.seconds - T0) / DAY


def say(client, text, day, **metadata):  # type: ignore[no-untyped-def]
    """Inserts `text` as said on `day`."""
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content=text,
            observed_at=at(day),
            metadata=sources_pb2.InsertMetadata(**metadata),
        )
    )


def search(client, query="", *, as_of=None, history=False, **kw):  # type: ignore[no-untyped-def]
    request = facts_pb2.SearchFactsRequest(query=query, include_superseded=history, limit=100, **kw)
    if as_of is not None:
        request.as_of.CopyFrom(at(as_of))
    return list(client.SearchFacts(request).facts)


def values(client, query="", **kw):  # type: ignore[no-untyped-def]
    """(subject, predicate, object) of the facts a search returns, sorted."""
    return sorted((f.subject, f.predicate, f.object) for f in search(client, query, **kw))


def history(client, subject, predicate):  # type: ignore[no-untyped-def]
    """An attribute's intervals, in the order the history lists them (time order):
    (object, from day, to day or None)."""
    found = [
        f for f in search(client, history=True) if (f.subject, f.predicate) == (subject, predicate)
    ]
    return [(f.object, day_of(f.valid_from), day_of(f.valid_to)) for f in found]


def fact_of(client, obj, **kw):  # type: ignore[no-untyped-def]
    (found,) = [f for f in search(client, history=True, **kw) if f.object == obj]
    return found


def ask(client, question, as_of=None):  # type: ignore[no-untyped-def]
    request = facts_pb2.AskRequest(question=question, token_budget=300)
    if as_of is not None:
        request.as_of.CopyFrom(at(as_of))
    return client.Ask(request)
