"""Facts' times on the wire: a fact's interval, supersession and sentence, the profile's and
Ask's times, observed_at and as_of as Timestamps (their ranges checked), a message's sent_at.
The rules of facts over time are tested on the use cases (tests/service/test_fact_time.py)."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import facts_pb2, sources_pb2
from tests.fact_time_helpers import (
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
