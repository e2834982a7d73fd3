"""Facts' times on the wire: a fact's interval, supersession and sentence, the profile's and
Ask's times, observed_at and as_of as Timestamps (their ranges checked), a message's sent_at.
The rules of facts over time are tested on the use cases (tests/service/test_fact_time.py)."""

from __future__ import annotations

import logging
import time

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import facts_pb2, sources_pb2
from tests.fact_time_helpers import (
    DAY,
    T0,
    ask,
    at,
    day_of,
    fact_of,
    history,
    say,
    search,
    values,
)
from tests.harness import reason
from tests.memory_helpers import get_source, insert
from tests.test_field_names import violations

LIVES = ("user", "lives in")


def test_a_later_statement_supersedes_the_earlier_at_its_time(stack):
    client = stack.client()
    say(client, "I live in Lisbon", 0)
    berlin = say(client, "I live in Berlin", 150)
    assert values(client, "live") == [("user", "lives in", "Berlin")]
    assert history(client, *LIVES) == [("Lisbon", 0, 150), ("Berlin", 150, None)]
    lisbon_fact, berlin_fact = fact_of(client, "Lisbon"), fact_of(client, "Berlin")
    assert lisbon_fact.superseded_by == berlin_fact.fact_id and not berlin_fact.superseded_by
    assert berlin_fact.source_id == berlin.source_id
    assert (berlin_fact.sentence_start, berlin_fact.sentence_end) == (0, len("I live in Berlin"))

    assert values(client, "live", as_of=10) == [("user", "lives in", "Lisbon")]
    assert values(client, "live", as_of=150) == [("user", "lives in", "Berlin")]
    assert values(client, "live", as_of=-1) == []  # before anything was said

    (entry,) = client.GetProfile(facts_pb2.GetProfileRequest()).entries
    assert (entry.key, entry.value, day_of(entry.since)) == ("user lives in", "Berlin", 150)
    request = facts_pb2.GetProfileRequest(as_of=at(20))
    assert [e.value for e in client.GetProfile(request).entries] == ["Lisbon"]

    a = ask(client, "Where do I live?")
    assert a.answer == "The user lives in Berlin (since 2024-04-12)."
    assert a.answer_basis == "facts" and day_of(a.changed_at) == 150
    (p,) = a.provenance
    assert (p.fact_id, day_of(p.valid_from), day_of(p.valid_to)) == (berlin_fact.fact_id, 150, None)
    earlier = ask(client, "Where do I live?", as_of=30)
    assert earlier.answer == "The user lives in Lisbon."
    assert [day_of(p.valid_to) for p in earlier.provenance] == [150]
    assert not earlier.HasField("changed_at")


def test_a_messages_sent_at_is_its_facts_time(stack):
    client = stack.client()
    client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            observed_at=at(100),
            messages=[
                sources_pb2.Message(role="user", content="I live in Lisbon.", sent_at=at(5)),
                sources_pb2.Message(role="assistant", content="Nice city."),
                sources_pb2.Message(role="user", content="I work at Google."),
            ],
        )
    )
    by_object = {f.object: f for f in search(client)}
    assert day_of(by_object["Lisbon"].valid_from) == 5
    assert day_of(by_object["Google"].valid_from) == 100  # no sent_at: the memory's time


def test_observed_at_is_stored_with_the_source_and_defaults_to_received(stack):
    client = stack.client()
    given = say(client, "I live in Lisbon", 3)
    assert day_of(get_source(client, given.source_id).observed_at) == 3
    received = get_source(client, insert(client, "I like tea").source_id)
    assert received.observed_at == received.created_at


@pytest.mark.parametrize(
    "seconds", [T0 * 2, 253_402_300_800, -5], ids=["future", "past 9999", "before 1970"]
)
def test_a_bad_observed_at_is_refused_and_stores_nothing(stack, seconds):
    client = stack.client()
    request = sources_pb2.InsertMemoryRequest(content="I live in Lisbon")
    request.observed_at.seconds = seconds
    with pytest.raises(grpc.RpcError) as e:
        client.InsertMemory(request)
    assert reason(e.value) == "INVALID_FIELD" and "observed_at" in e.value.details()
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]


def test_a_bad_as_of_is_refused(stack):
    client = stack.client()
    request = facts_pb2.SearchFactsRequest()
    request.as_of.seconds = 253_402_300_800
    with pytest.raises(grpc.RpcError) as e:
        client.SearchFacts(request)
    assert reason(e.value) == "INVALID_FIELD" and "as_of" in e.value.details()


YEAR = 365 * DAY
# (seconds, nanos) no request time may hold; "ten years ahead" is from the clock, when run.
BAD_TIMES = {
    "past 9999": (253_402_300_800, 0),
    "before year 1": (-62_135_596_801, 0),
    "before 1970": (-5, 0),
    "negative nanos": (T0, -1),
    "nanos of a whole second": (T0, 1_000_000_000),
    "ten years ahead": (None, 0),
}


def _bad_time(case: str) -> Timestamp:
    seconds, nanos = BAD_TIMES[case]
    return Timestamp(
        seconds=int(time.time()) + 10 * YEAR if seconds is None else seconds, nanos=nanos
    )


def _conversation(sent_at: Timestamp) -> list[sources_pb2.Message]:
    return [
        sources_pb2.Message(role="user", content="I live in Lisbon.", sent_at=at(1)),
        sources_pb2.Message(role="assistant", content="Nice city."),
        sources_pb2.Message(role="user", content="I live in Porto now.", sent_at=sent_at),
    ]


def _refused_naming(call, field: str, caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.ERROR), pytest.raises(grpc.RpcError) as e:
        call()
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
    assert reason(e.value) == "INVALID_FIELD" and violations(e.value) == [field]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("case", BAD_TIMES)
def test_a_bad_sent_at_is_refused_on_insert_and_stores_nothing(stack, case, caplog):
    client = stack.client()
    request = sources_pb2.InsertMemoryRequest(messages=_conversation(_bad_time(case)))
    _refused_naming(lambda: client.InsertMemory(request), "messages[2].sent_at", caplog)
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]
    assert stack.sql("SELECT count(*) FROM facts") == [(0,)]


@pytest.mark.parametrize("case", BAD_TIMES)
def test_a_bad_sent_at_is_refused_on_append_and_changes_nothing(stack, case, caplog):
    client = stack.client()
    started = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=[sources_pb2.Message(role="user", content="I work at Google.")]
        )
    )
    request = sources_pb2.AppendMessagesRequest(
        source_id=started.source_id, expected_revision=1, messages=_conversation(_bad_time(case))
    )
    _refused_naming(lambda: client.AppendMessages(request), "messages[2].sent_at", caplog)
    stored = get_source(client, started.source_id, include_content=True)
    assert stored.revision == 1 and len(stored.messages) == 1
    assert [f.object for f in search(client)] == ["Google"]


def test_a_sent_at_ahead_by_less_than_the_clock_skew_is_kept(stack):
    client = stack.client()
    soon = Timestamp(seconds=int(time.time()) + 60)
    client.InsertMemory(sources_pb2.InsertMemoryRequest(messages=_conversation(soon)))
    assert values(client, "live") == [("user", "lives in", "Porto")]


@pytest.mark.parametrize("case", [c for c in BAD_TIMES if c != "ten years ahead"])
def test_every_request_time_out_of_range_is_refused(stack, case, caplog):
    client = stack.client()
    bad = _bad_time(case)
    calls = [
        (
            "observed_at",
            client.InsertMemory,
            sources_pb2.InsertMemoryRequest(content="I live here"),
        ),
        ("as_of", client.SearchFacts, facts_pb2.SearchFactsRequest()),
        ("as_of", client.GetProfile, facts_pb2.GetProfileRequest()),
        ("as_of", client.Ask, facts_pb2.AskRequest(question="Where?", token_budget=50)),
    ]
    for field, method, request in calls:
        getattr(request, field).CopyFrom(bad)
        _refused_naming(lambda: method(request), field, caplog)  # noqa: B023 (called at once)
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]
