"""Passage-level retrieval inside conversations: search finds the exchange that answers,
cites its message range, prompts inject only it; passages follow their source's lifecycle."""

from __future__ import annotations

import re

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import facts_pb2, foreign_pb2, retrieval_pb2, review_pb2, sources_pb2
from tests.memory_helpers import (
    assemble,
    classify,
    explain,
    get_source,
    insert,
    search,
)
from tests.test_foreign import readback
from tests.test_lifecycle import pending_stack  # noqa: F401 (fixture)
from tests.test_review import AGENT, USER, review

FILLER = [
    "How was the weekend hike up the ridge?",
    "Windy, but the view over the valley was worth it.",
    "Did you finish the quarterly report for the board?",
    "Almost, the charts still need another pass.",
    "Shall we book the train tickets for the conference?",
    "Yes, the early train on Thursday works for me.",
]
QUESTION = "Which instrument did your grandmother leave you?"
ANSWER = "She left me her old zqcello with the carved scroll."


def conversation() -> list[sources_pb2.Message]:
    """Twelve messages; the answer is the exchange at 6-7 (question, reply)."""
    sent = Timestamp(seconds=1_683_000_000)  # 2 May 2023
    texts = [*FILLER, QUESTION, ANSWER, *FILLER[:4]]
    names = ["Caroline", "Melanie"]
    return [
        sources_pb2.Message(
            role="user" if i % 2 else "assistant",
            content=t,
            name=names[i % 2],
            sent_at=sent,
        )
        for i, t in enumerate(texts)
    ]


def insert_conversation(client, **metadata):
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=conversation(), metadata=sources_pb2.InsertMetadata(**metadata)
        )
    )


def passages_search(client, query, limit=10):
    return client.SearchMemories(
        retrieval_pb2.SearchMemoriesRequest(query=query, limit=limit, group_by_source=False)
    )


def test_speaker_names_and_dates_are_stored_with_the_conversation(stack):
    client = stack.client()
    s = insert_conversation(client)
    stored = get_source(client, s.source_id, include_content=True)
    assert [m.name for m in stored.messages[:2]] == ["Caroline", "Melanie"]
    assert stored.messages[7].content == ANSWER
    assert stored.messages[0].sent_at.seconds == 1_683_000_000


def test_search_returns_the_answering_exchange_with_its_range(stack):
    client = stack.client()
    s = insert_conversation(client)
    plain = insert(client, "The user keeps a zqcello case in the hallway")
    hits = search(client, "zqcello grandmother").hits
    assert [h.source_id for h in hits] == [s.source_id, plain.source_id]  # one hit per source
    best = hits[0]
    assert (best.passage.message_start, best.passage.message_end) == (6, 7)
    assert best.citation.passage == best.passage
    assert "zqcello" in best.snippet and "hike" not in best.snippet
    assert not hits[1].HasField("passage") and not hits[1].citation.HasField("passage")

    several = passages_search(client, "zqcello grandmother instrument").hits
    ranges = [(h.passage.message_start, h.passage.message_end) for h in several if h.passage]
    assert ranges[0] == (6, 7) and len(ranges) >= 2  # several passages of one conversation
    assert {h.source_id for h in several} == {s.source_id, plain.source_id}


def test_the_prompt_holds_the_exchange_not_the_whole_conversation(stack):
    client = stack.client()
    s = insert_conversation(client)
    prompt = assemble(client, "zqcello grandmother")
    assert ANSWER in prompt.context and "Melanie" in prompt.context
    # the matching passages' messages (6-8) and the reply to the question 8 asks (9) only
    assert "quarterly report" not in prompt.context and "train tickets" not in prompt.context
    cited = [
        (c.source_id, c.passage.message_start, c.passage.message_end) for c in prompt.citations
    ]
    assert cited == [(s.source_id, 5, 9)]
    assert prompt.context.count(ANSWER) == 1
    assert "[1] 02 May 2023\n" in prompt.context  # the conversation's date heads it once


def test_explanation_reports_the_conversation_once_with_its_best_passage(stack):
    client = stack.client()
    s = insert_conversation(client)
    query = "zqcello grandmother instrument"
    entries = explain(client, query).entries
    assert [e.source_id for e in entries] == [s.source_id]
    assert entries[0].rank == 1
    assert abs(entries[0].score - search(client, query).hits[0].score) < 1e-9


def _nothing_found(client):
    assert search(client, "zqcello").hits == []
    assert passages_search(client, "zqcello").hits == []
    assert assemble(client, "zqcello").context == ""


def test_cold_revoked_and_erased_conversations_contribute_no_passage(stack):
    client = stack.client()
    s = insert_conversation(client)
    r = readback(client, s.source_id)
    stored = {d.derivative_id for d in r.derivatives if d.kind == "passage"}
    # the question (6) with its context and its reply; the reply (7) with its context; the
    # first two messages share one passage (the first asks, the second answers)
    assert {f"{s.source_id}#passage:5-7", f"{s.source_id}#passage:6-7"} <= stored
    assert len(stored) == 11
    classify(client, s.source_id, 1, sources_pb2.CLASSIFICATION_COLD)
    _nothing_found(client)
    classify(client, s.source_id, 2, sources_pb2.CLASSIFICATION_ACTIVE)
    assert passages_search(client, "zqcello").hits
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=s.source_id))
    _nothing_found(client)
    r = readback(client, s.source_id)
    assert ("passage", "purged") in {(d.kind, d.state) for d in r.derivatives}
    assert r.clean

    erased = insert_conversation(client)
    client.EraseSource(
        foreign_pb2.EraseSourceRequest(source_id=erased.source_id, expected_revision=1)
    )
    _nothing_found(client)
    assert stack.sql("SELECT count(*) FROM search_postings")[0][0] == 0


def test_a_pending_conversation_gets_passages_on_approval(pending_stack):  # noqa: F811
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    s = insert_conversation(agent)
    assert s.status == sources_pb2.STATUS_PENDING_REVIEW
    _nothing_found(user)
    review(user, s.source_id, 1, review_pb2.DECISION_APPROVE)
    hits = passages_search(user, "zqcello grandmother").hits
    assert hits and (hits[0].passage.message_start, hits[0].passage.message_end) == (6, 7)


def test_plain_memories_are_one_dated_line(stack):
    client = stack.client()
    a = insert(client, "The user plays a yellow zqguitar on weekends")
    hits = search(client, "zqguitar").hits
    assert [h.source_id for h in hits] == [a.source_id]
    assert not hits[0].HasField("passage")
    prompt = assemble(client, "zqguitar")
    assert re.search(
        r"^\[1\] \d\d \w+ \d{4} The user plays a yellow zqguitar on weekends$",
        prompt.context,
        re.M,
    )
    assert prompt.citations[0].source_id == a.source_id
    assert not prompt.citations[0].HasField("passage")


def test_grouped_search_fills_k_with_distinct_sources(stack):
    client = stack.client()
    talk = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=[
                sources_pb2.Message(role="user", content=f"zqtea zqtea zqtea round {i}")
                for i in range(10)
            ]
        )
    )
    plain = [insert(client, f"The user once drank zqtea in city number {i}") for i in range(2)]
    hits = search(client, "zqtea", limit=2).hits
    assert hits[0].source_id == talk.source_id
    assert len({h.source_id for h in hits}) == 2 and hits[1].source_id in {
        p.source_id for p in plain
    }
    several = passages_search(client, "zqtea", limit=5).hits
    assert [h.source_id for h in several] == [talk.source_id] * 5


def test_conversations_stored_without_names_keep_their_old_bytes(stack):
    client = stack.client()
    s = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=[sources_pb2.Message(role="user", content="I keep zqbees")]
        )
    )
    raw = stack.sql("SELECT raw FROM sources WHERE source_id = :s", s=s.source_id)[0][0]
    assert raw == '[["user", "I keep zqbees"]]'
    stored = get_source(client, s.source_id, include_content=True)
    assert stored.messages[0].name == "" and not stored.messages[0].HasField("sent_at")


def test_ask_cites_the_passage_it_answers_from(stack):
    client = stack.client()
    s = insert_conversation(client)
    a = client.Ask(facts_pb2.AskRequest(question="zqcello grandmother", token_budget=500))
    # The sentence that answers, read with the question it replies to, cited by its
    # message and characters.
    assert (a.answer_basis, a.answer) == ("memories", ANSWER)
    cited = a.citations[0].passage
    assert (a.citations[0].source_id, cited.message_start, cited.message_end) == (s.source_id, 7, 7)
    assert (cited.char_start, cited.char_end) == (0, len(ANSWER))
    assert a.provenance[0].passage == cited
