"""Facts have time: supersession of single-valued attributes, late statements, restatements,
ends, as-of reads and the history, on the use cases."""

from __future__ import annotations

import pytest

from agentmem.contract.errors import AgentmemError
from runtime_svc.domain.sources import Message
from runtime_svc.services.inserts import InsertCommand
from tests.fact_time_helpers import T0
from tests.service.facts_support import (
    A,
    ask,
    at_us,
    day_of,
    fact_of,
    history,
    insert,
    say,
    search,
    values,
)
from tests.service.wiring import reason

LIVES = ("user", "lives in")


def test_a_later_statement_supersedes_the_earlier_at_its_time(service):
    say(service, "I live in Lisbon", 0)
    berlin = say(service, "I live in Berlin", 150)
    assert values(service, "live") == [("user", "lives in", "Berlin")]
    assert history(service, *LIVES) == [("Lisbon", 0, 150), ("Berlin", 150, None)]
    lisbon_fact, berlin_fact = fact_of(service, "Lisbon"), fact_of(service, "Berlin")
    assert lisbon_fact.superseded_by == berlin_fact.fact_id and not berlin_fact.superseded_by
    assert berlin_fact.source_id == berlin.source_id

    assert values(service, "live", as_of=10) == [("user", "lives in", "Lisbon")]
    assert values(service, "live", as_of=150) == [("user", "lives in", "Berlin")]
    assert values(service, "live", as_of=-1) == []  # before anything was said

    (entry,) = service.facts.profile(A, "")
    assert (entry.key, entry.value, day_of(entry.since_us)) == ("user lives in", "Berlin", 150)
    assert [e.value for e in service.facts.profile(A, "", at_us(20))] == ["Lisbon"]

    a = ask(service, "Where do I live?")
    assert a.text == "The user lives in Berlin (since 2024-04-12)."
    assert a.basis == "facts" and day_of(a.changed_at_us) == 150
    (p,) = a.pieces
    assert (p.fact_id, day_of(p.valid_from_us), day_of(p.valid_to_us)) == (
        berlin_fact.fact_id,
        150,
        None,
    )
    earlier = ask(service, "Where do I live?", as_of=30)
    assert earlier.text == "The user lives in Lisbon."
    assert [day_of(p.valid_to_us) for p in earlier.pieces] == [150]
    assert earlier.changed_at_us == 0


def test_a_late_statement_with_an_earlier_time_takes_its_place_in_time(service):
    say(service, "I live in Berlin", 150)
    say(service, "I live in Lisbon", 0)  # said first, stored last
    assert values(service, "live") == [("user", "lives in", "Berlin")]
    assert history(service, *LIVES) == [("Lisbon", 0, 150), ("Berlin", 150, None)]
    say(service, "I moved to Porto", 100)
    assert values(service, "live") == [("user", "lives in", "Berlin")]
    assert history(service, *LIVES) == [
        ("Lisbon", 0, 100),
        ("Porto", 100, 150),
        ("Berlin", 150, None),
    ]


def test_restating_the_current_value_opens_no_new_interval(service):
    first = say(service, "I live in Lisbon", 0)
    say(service, "Just so you know, I live in lisbon.", 50)
    assert history(service, *LIVES) == [("Lisbon", 0, None)]
    assert [f.source_id for f in search(service, "live")] == [first.source_id]
    say(service, "I live in Berlin", 100)
    assert history(service, *LIVES) == [("Lisbon", 0, 100), ("Berlin", 100, None)]


def test_multi_valued_attributes_never_supersede_and_end_one_by_one(service):
    say(service, "I like jazz", 0)
    say(service, "I like techno", 10)
    say(service, "I'm allergic to peanuts", 0)
    say(service, "I'm allergic to shellfish", 10)
    assert values(service) == [
        ("user", "is allergic to", "peanuts"),
        ("user", "is allergic to", "shellfish"),
        ("user", "likes", "jazz"),
        ("user", "likes", "techno"),
    ]
    say(service, "I don't like jazz anymore", 20)
    assert ("user", "likes", "jazz") not in values(service)
    assert ("user", "likes", "techno") in values(service)
    assert history(service, "user", "likes") == [("jazz", 0, 20), ("techno", 10, None)]


def test_no_other_subject_or_attribute_changes(service):
    say(service, "My sister lives in Lisbon. I live in Porto. I work at Google.", 0)
    say(service, "I moved to Berlin", 10)
    assert values(service) == [
        ("user", "lives in", "Berlin"),
        ("user", "works at", "Google"),
        ("user's sister", "lives in", "Lisbon"),
    ]
    assert history(service, "user's sister", "lives in") == [("Lisbon", 0, None)]


def test_changes_of_job_and_ends_of_values(make_service):
    made = make_service()
    service = made.cases
    say(service, "I work at Google", 0)
    say(service, "My new job is at Spotify!", 10)
    assert values(service, "work") == [("user", "works at", "Spotify")]
    assert history(service, "user", "works at") == [("Google", 0, 10), ("Spotify", 10, None)]
    end = say(service, "I don't work at Spotify anymore.", 20)
    assert values(service, "work") == []
    spotify = fact_of(service, "Spotify")
    assert day_of(spotify.valid_to_us) == 20
    ended_by = made.sql("SELECT source_id FROM facts WHERE fact_id = :f", f=spotify.superseded_by)
    assert ended_by == [(end.source_id,)]
    say(service, "I no longer live in Lisbon", 5)  # ends a value that was never current
    say(service, "I started working at Mozilla", 30)
    assert values(service) == [("user", "works at", "Mozilla")]


def test_the_compound_sentence_gives_two_facts_and_ask_answers_only_where(service):
    insert(service, "I live in Lisbon and I'm allergic to peanuts")
    assert values(service) == [
        ("user", "is allergic to", "peanuts"),
        ("user", "lives in", "Lisbon"),
    ]
    assert ask(service, "where do I live?").text == "The user lives in Lisbon."
    by_object = {f.triple.object: f for f in search(service)}
    text = "I live in Lisbon and I'm allergic to peanuts"
    for f in by_object.values():  # tied to the sentence they were read from
        span = f.triple.span
        assert span is not None and text[span.start : span.end] == text
    assert "one clause of a longer sentence" in by_object["Lisbon"].confidence_reason


def test_facts_about_people_the_user_names(service):
    insert(service, "My sister lives in Lisbon", "explicit_user_request")
    (f,) = search(service)
    t = f.triple
    assert (t.subject, t.predicate, t.object) == ("user's sister", "lives in", "Lisbon")
    assert t.statement == "The user's sister lives in Lisbon"
    assert f.confidence < 0.9 and "someone the user named" in f.confidence_reason


def test_a_messages_sent_at_is_its_facts_time(service):
    messages = [
        Message("user", "I live in Lisbon.", sent_at_us=at_us(5)),
        Message("assistant", "Nice city."),
        Message("user", "I work at Google."),
    ]
    service.inserts.insert(A, InsertCommand(messages=messages, observed_at_us=at_us(100)))
    by_object = {f.triple.object: f for f in search(service)}
    assert day_of(by_object["Lisbon"].valid_from_us) == 5
    assert day_of(by_object["Google"].valid_from_us) == 100  # no sent_at: the memory's time


def test_observed_at_is_stored_with_the_source_and_defaults_to_received(service):
    given = say(service, "I live in Lisbon", 3)
    assert day_of(service.reads.get(A, given.source_id, False)[0].observed_at_us) == 3
    received, _ = service.reads.get(A, insert(service, "I like tea").source_id, False)
    assert received.observed_at_us == received.created_at_us


def test_an_observed_at_in_the_future_is_refused_and_stores_nothing(make_service):
    made = make_service()
    with pytest.raises(AgentmemError) as e:
        made.cases.inserts.insert(
            A, InsertCommand(content="I live in Lisbon", observed_at_us=T0 * 2 * 1_000_000)
        )
    assert reason(e.value) == "INVALID_FIELD"
    assert [v.field for v in e.value.violations] == ["observed_at"]
    assert made.sql("SELECT count(*) FROM sources") == [(0,)]


def test_history_is_returned_only_when_asked_for(service):
    say(service, "I live in Lisbon", 0)
    say(service, "I live in Berlin", 1)
    assert len(search(service)) == 1 and len(search(service, history=True)) == 2
    # The history up to a time: the intervals begun by then.
    assert [f.triple.object for f in search(service, history=True, as_of=0.5)] == ["Lisbon"]
