"""Facts have time: supersession of single-valued attributes, late statements, restatements,
ends, as-of reads and the history, through real servers."""

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


def test_a_late_statement_with_an_earlier_time_takes_its_place_in_time(stack):
    client = stack.client()
    say(client, "I live in Berlin", 150)
    say(client, "I live in Lisbon", 0)  # said first, stored last
    assert values(client, "live") == [("user", "lives in", "Berlin")]
    assert history(client, *LIVES) == [("Lisbon", 0, 150), ("Berlin", 150, None)]
    say(client, "I moved to Porto", 100)
    assert values(client, "live") == [("user", "lives in", "Berlin")]
    assert history(client, *LIVES) == [
        ("Lisbon", 0, 100),
        ("Porto", 100, 150),
        ("Berlin", 150, None),
    ]


def test_restating_the_current_value_opens_no_new_interval(stack):
    client = stack.client()
    first = say(client, "I live in Lisbon", 0)
    say(client, "Just so you know, I live in lisbon.", 50)
    assert history(client, *LIVES) == [("Lisbon", 0, None)]
    assert [f.source_id for f in search(client, "live")] == [first.source_id]
    say(client, "I live in Berlin", 100)
    assert history(client, *LIVES) == [("Lisbon", 0, 100), ("Berlin", 100, None)]


def test_multi_valued_attributes_never_supersede_and_end_one_by_one(stack):
    client = stack.client()
    say(client, "I like jazz", 0)
    say(client, "I like techno", 10)
    say(client, "I'm allergic to peanuts", 0)
    say(client, "I'm allergic to shellfish", 10)
    assert values(client) == [
        ("user", "is allergic to", "peanuts"),
        ("user", "is allergic to", "shellfish"),
        ("user", "likes", "jazz"),
        ("user", "likes", "techno"),
    ]
    say(client, "I don't like jazz anymore", 20)
    assert ("user", "likes", "jazz") not in values(client)
    assert ("user", "likes", "techno") in values(client)
    assert history(client, "user", "likes") == [("jazz", 0, 20), ("techno", 10, None)]


def test_no_other_subject_or_attribute_changes(stack):
    client = stack.client()
    say(client, "My sister lives in Lisbon. I live in Porto. I work at Google.", 0)
    say(client, "I moved to Berlin", 10)
    assert values(client) == [
        ("user", "lives in", "Berlin"),
        ("user", "works at", "Google"),
        ("user's sister", "lives in", "Lisbon"),
    ]
    assert history(client, "user's sister", "lives in") == [("Lisbon", 0, None)]


def test_changes_of_job_and_ends_of_values(stack):
    client = stack.client()
    say(client, "I work at Google", 0)
    say(client, "My new job is at Spotify!", 10)
    assert values(client, "work") == [("user", "works at", "Spotify")]
    assert history(client, "user", "works at") == [("Google", 0, 10), ("Spotify", 10, None)]
    end = say(client, "I don't work at Spotify anymore.", 20)
    assert values(client, "work") == []
    spotify = fact_of(client, "Spotify")
    assert day_of(spotify.valid_to) == 20
    ended_by = stack.sql("SELECT source_id FROM facts WHERE fact_id = :f", f=spotify.superseded_by)
    assert ended_by == [(end.source_id,)]
    say(client, "I no longer live in Lisbon", 5)  # ends a value that was never current
    say(client, "I started working at Mozilla", 30)
    assert values(client) == [("user", "works at", "Mozilla")]


def test_the_compound_sentence_gives_two_facts_and_ask_answers_only_where(stack):
    client = stack.client()
    insert(client, "I live in Lisbon and I'm allergic to peanuts")
    assert values(client) == [
        ("user", "is allergic to", "peanuts"),
        ("user", "lives in", "Lisbon"),
    ]
    assert ask(client, "where do I live?").answer == "The user lives in Lisbon."
    by_object = {f.object: f for f in search(client)}
    text = "I live in Lisbon and I'm allergic to peanuts"
    for f in by_object.values():  # tied to the sentence they were read from
        assert text[f.sentence_start : f.sentence_end] == text
    assert "one clause of a longer sentence" in by_object["Lisbon"].confidence_reason


def test_facts_about_people_the_user_names(stack):
    client = stack.client()
    insert(client, "My sister lives in Lisbon", save_intent="explicit_user_request")
    (f,) = search(client)
    assert (f.subject, f.predicate, f.object) == ("user's sister", "lives in", "Lisbon")
    assert f.statement == "The user's sister lives in Lisbon"
    assert f.confidence < 0.9 and "someone the user named" in f.confidence_reason


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


def test_history_is_returned_only_when_asked_for(stack):
    client = stack.client()
    say(client, "I live in Lisbon", 0)
    say(client, "I live in Berlin", 1)
    assert len(search(client)) == 1 and len(search(client, history=True)) == 2
    # The history up to a time: the intervals begun by then.
    assert [f.object for f in search(client, history=True, as_of=0.5)] == ["Lisbon"]
