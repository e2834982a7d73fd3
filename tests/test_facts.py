"""Facts, profile and ask: provenance, confidence, eligibility."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import facts_pb2, review_pb2, sources_pb2
from tests.harness import KEYS, READER_A, reason
from tests.memory_helpers import ACTIVE, COLD, classify, insert
from tests.test_review import AGENT, USER

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"


def facts(client, query="", **kw):
    return list(client.SearchFacts(facts_pb2.SearchFactsRequest(query=query, **kw)).facts)


def profile(client, **kw):
    return list(client.GetProfile(facts_pb2.GetProfileRequest(**kw)).entries)


def ask(client, question, token_budget=200):
    return client.Ask(facts_pb2.AskRequest(question=question, token_budget=token_budget))


def test_the_seed_example_yields_a_fact_about_the_squier(stack):
    client = stack.client()
    s = insert(client, SQUIER, save_intent="explicit_user_request", save_intent_source="opencode")
    found = facts(client, "Squier")
    assert len(found) == 1
    f = found[0]
    assert f.statement == (
        "The user has a yellow Squier Tele with a black pickguard and Nocaster pickups"
    )
    assert (f.subject, f.predicate) == ("user", "has")
    assert (f.source_id, f.source_revision) == (s.source_id, 1)
    assert (f.save_intent, f.save_intent_source) == ("explicit_user_request", "opencode")
    assert f.confidence == pytest.approx(0.9) and f.confidence_reason
    entry = profile(client)[0]
    assert (entry.key, entry.value, list(entry.fact_ids)) == (
        "user has",
        "a yellow Squier Tele with a black pickguard and Nocaster pickups",
        [f.fact_id],
    )
    a = ask(client, "Which guitar does the user have? A Squier?")
    assert a.answer_basis == "facts" and "Squier Tele" in a.answer
    assert [(p.source_id, p.fact_id, p.save_intent) for p in a.provenance] == [
        (s.source_id, f.fact_id, "explicit_user_request")
    ]
    assert [c.source_id for c in a.citations] == [s.source_id]


def test_auto_saved_facts_are_less_certain_and_say_why(stack):
    client = stack.client()
    # "plays" holds many values: both stay current.
    insert(
        client, "I play the cello", save_intent="explicit_user_request", save_intent_source="claude"
    )
    insert(client, "I play the oboe", save_intent="client_auto_save", save_intent_source="opencode")
    by_object = {f.object: f for f in facts(client, "play")}
    assert by_object["the cello"].confidence > by_object["the oboe"].confidence
    assert "auto-save" in by_object["the oboe"].confidence_reason
    assert [f.object for f in facts(client, save_intent_source="opencode")] == ["the oboe"]
    assert [f.object for f in facts(client, save_intent="explicit_user_request")] == ["the cello"]
    assert profile(client, save_intent_source="claude")[0].value == "the cello"
    assert profile(client)[0].value == "the cello; the oboe"  # most confident first


def test_cold_sources_facts_leave_every_surface_and_come_back(stack):
    client = stack.client()
    s = insert(client, SQUIER, save_intent="user_confirmed")
    insert(client, "The weather was nice")
    classify(client, s.source_id, 1, COLD)
    assert facts(client, "Squier") == [] and profile(client) == []
    assert ask(client, "Squier guitar?").answer_basis == "none"
    assert [
        f.source_id for f in facts(client, "Squier", status=facts_pb2.FACT_STATUS_INELIGIBLE)
    ] == [s.source_id]
    classify(client, s.source_id, 2, ACTIVE)
    assert [f.source_id for f in facts(client, "Squier")] == [s.source_id]
    assert profile(client)[0].key == "user has"
    assert ask(client, "Squier guitar?").answer_basis == "facts"


def test_ineligible_facts_need_the_content_scope(stack):
    with pytest.raises(grpc.RpcError) as e:
        facts(stack.client(READER_A), status=facts_pb2.FACT_STATUS_ALL)
    assert reason(e.value) == "MISSING_SCOPE"


def test_ask_falls_back_to_memories_and_to_none(stack):
    client = stack.client()
    s = insert(client, "Dinner with Maria at the harbour restaurant was lovely")
    a = ask(client, "Where was the dinner with Maria?")
    assert a.answer_basis == "memories" and "harbour" in a.answer
    assert a.confidence < 0.5 and a.provenance[0].source_id == s.source_id
    assert a.provenance[0].fact_id == ""
    assert ask(client, "zebra stripes?").answer_basis == "none"


def test_pending_memories_have_no_facts_until_a_user_approves(make_stack):
    stack = make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)],
    )
    agent, user = stack.client(AGENT), stack.client(USER)
    pending = insert(agent, SQUIER)
    assert facts(user, "Squier") == [] and profile(user) == []
    assert ask(user, "Squier?").answer_basis == "none"
    user.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=pending.source_id, expected_revision=1, decision=review_pb2.DECISION_APPROVE
        )
    )
    f = facts(user, "Squier")[0]
    assert (f.source_id, f.source_revision, f.save_intent) == (
        pending.source_id,
        2,
        "user_confirmed",
    )
    assert ask(user, "Squier?").answer_basis == "facts"
    assert [e.fact_ids[0] for e in profile(user)] == [f.fact_id]


def test_refused_inserts_extract_nothing(make_stack):
    stack = make_stack(memory__insert_policy="require_save_intent")
    client = stack.client()
    with pytest.raises(grpc.RpcError):
        insert(client, SQUIER)
    assert facts(client, "Squier") == [] and profile(client) == []


def test_only_the_users_own_words_become_facts(stack):
    client = stack.client()
    client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=[
                sources_pb2.Message(role="user", content="I play the cello."),
                sources_pb2.Message(
                    role="assistant", content="I have no hands, but that is lovely."
                ),
            ]
        )
    )
    assert [f.statement for f in facts(client)] == ["The user plays the cello"]


def six_messages():
    """A conversation of six messages; the user states a fact in message 3."""
    texts = [
        ("assistant", "Good evening, how was the rehearsal?"),
        ("user", "Long, the hall was freezing tonight."),
        ("assistant", "Which piece are you working on?"),
        ("user", "I play the zqviola in a string quartet."),
        ("assistant", "Lovely, a warm instrument."),
        ("user", "Thanks, see you tomorrow."),
    ]
    return [sources_pb2.Message(role=r, content=t) for r, t in texts]


def insert_six(client):
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=six_messages(),
            metadata=sources_pb2.InsertMetadata(save_intent="explicit_user_request"),
        )
    )


def span(p):
    return (p.message_start, p.message_end)


def test_a_fact_from_a_conversation_cites_the_passage_it_was_stated_in(stack):
    from agentmem.v1 import retrieval_pb2

    client = stack.client()
    s = insert_six(client)
    plain = insert(client, "I play the zqoboe on Sundays")
    by_object = {f.object: f for f in facts(client, "play")}
    f = by_object["the zqviola in a string quartet"]
    assert f.source_id == s.source_id and span(f.passage) == (2, 3)
    # The very passage the passage index holds for message 3.
    hits = client.SearchMemories(
        retrieval_pb2.SearchMemoriesRequest(query="zqviola quartet", limit=5, group_by_source=False)
    ).hits
    assert span(hits[0].passage) == span(f.passage)
    assert not by_object["the zqoboe on Sundays"].HasField("passage")
    assert plain.source_id == by_object["the zqoboe on Sundays"].source_id

    a = ask(client, "Which zqviola does the user play?")
    assert a.answer_basis == "facts"
    cited = {p.fact_id: p for p in a.provenance}
    assert span(cited[f.fact_id].passage) == (2, 3)
    assert (s.source_id, (2, 3)) in {(c.source_id, span(c.passage)) for c in a.citations}


def test_a_facts_passage_follows_the_configured_window(make_stack):
    client = make_stack(retrieval__passages__before=2).client()
    insert_six(client)
    (f,) = facts(client, "zqviola")
    assert span(f.passage) == (1, 3)


def test_an_approved_conversations_facts_cite_their_passage(make_stack):
    stack = make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)],
    )
    agent, user = stack.client(AGENT), stack.client(USER)
    pending = agent.InsertMemory(sources_pb2.InsertMemoryRequest(messages=six_messages()))
    assert facts(user, "zqviola") == []
    user.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=pending.source_id, expected_revision=1, decision=review_pb2.DECISION_APPROVE
        )
    )
    (f,) = facts(user, "zqviola")
    assert (f.source_revision, span(f.passage)) == (2, (2, 3))


def test_ask_answers_only_what_was_asked(stack):
    """A fact found is not an answer: a question names what it asks about. (Found by
    meaning: `test_hybrid.py`.)"""
    client = stack.client()
    insert(client, "My dog is called Pixel")
    assert ask(client, "what is my dog called?").answer == "The user's dog is called Pixel."
    insert(client, "I live in Lisbon and I'm allergic to peanuts")
    a = ask(client, "where do I live?")
    assert a.answer == "The user lives in Lisbon."
    a = ask(client, "where do I live, and what about peanuts?")
    assert sorted(a.answer.splitlines()) == [
        "The user is allergic to peanuts.",
        "The user lives in Lisbon.",
    ]
    a = ask(client, "zebra stripes?")
    assert (a.answer_basis, a.answer) == ("none", "Nothing stored answers this question.")
    assert list(a.provenance) == [] and list(a.related) == []


def test_ask_cites_the_sources_current_revision(stack):
    client = stack.client()
    s = insert(client, "I live in Lisbon").source_id
    classify(client, s, 1, COLD)
    classify(client, s, 2, ACTIVE)
    a = ask(client, "where do I live?")
    assert a.answer == "The user lives in Lisbon."
    assert [(p.source_id, p.source_revision) for p in a.provenance] == [(s, 3)]
    assert [(c.source_id, c.revision) for c in a.citations] == [(s, 3)]
