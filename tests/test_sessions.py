"""Long agent sessions: conversations as hosts keep them (limits that fit a session,
configurable), through real servers."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import sources_pb2
from tests.harness import reason
from tests.memory_helpers import assemble, list_sources

# A coding session's batch: user messages of a paragraph, assistant replies of thousands of
# characters, about 170,000 characters in all.
SESSION = [
    sources_pb2.Message(
        role="user" if i % 2 == 0 else "assistant",
        content=(f"question {i} about the parser " * 40)
        if i % 2 == 0
        else (f"Here is step {i}.\n\n```python\nprint({i})\n```\n\n" + "explanation " * 500),
    )
    for i in range(52)
]


def conversation(client, messages, **kwargs):
    return client.InsertMemory(sources_pb2.InsertMemoryRequest(messages=messages, **kwargs))


def test_a_long_session_is_stored_in_one_insert(stack):
    client = stack.client()
    assert sum(len(m.content) for m in SESSION) > 150_000
    r = conversation(client, SESSION)
    assert r.source_id
    assert [s.source_id for s in list_sources(client).sources] == [r.source_id]


@pytest.mark.parametrize(
    ("limits", "messages", "field"),
    [
        (
            {"limits__max_messages_per_insert": 3},
            [sources_pb2.Message(role="user", content=f"m{i}") for i in range(4)],
            "messages",
        ),
        (
            {"limits__max_message_chars": 1_000},
            [sources_pb2.Message(role="user", content="x" * 1_001)],
            "messages[0].content",
        ),
        (
            {"limits__max_conversation_chars": 1_000},
            [sources_pb2.Message(role="user", content="x" * 600)] * 2,
            "messages",
        ),
    ],
    ids=["messages", "message-chars", "conversation-chars"],
)
def test_conversation_limits_are_configurable_and_refuse_clearly(
    make_stack, limits, messages, field
):
    client = make_stack(**limits).client()
    with pytest.raises(grpc.RpcError) as e:
        conversation(client, messages)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(e.value) == "INVALID_FIELD"
    assert field in (e.value.details() or "")
    assert "xxxx" not in (e.value.details() or "")  # no memory text in the error
    assert not list_sources(client).sources  # nothing stored


FILLER = "\n\n".join(f"Step {i}: configure the logging of module {i} carefully." for i in range(60))
REPLY = (
    FILLER
    + "\n\n```python\nledger = connect('postgresql://billing')\n```\n\n"
    + "Use PostgreSQL for the billing ledger: it keeps invoices consistent.\n\n"
    + FILLER
)


def test_a_long_reply_is_shown_by_the_part_that_answers_and_cited_by_its_characters(stack):
    client = stack.client()
    long = conversation(
        client,
        [
            sources_pb2.Message(role="user", content="Set up the service, please."),
            sources_pb2.Message(role="assistant", content=REPLY),
        ],
    )
    other = conversation(
        client,
        [sources_pb2.Message(role="user", content="The billing ledger must be ready by Friday.")],
    )
    r = assemble(client, "which database for the billing ledger invoices", token_budget=300)
    assert r.tokens_used <= 300
    parts = [c for c in r.citations if c.passage.char_end]
    assert [(c.source_id, c.passage.message_start, c.passage.message_end) for c in parts] == [
        (long.source_id, 1, 1)
    ]
    shown = REPLY[parts[0].passage.char_start : parts[0].passage.char_end]
    assert "PostgreSQL for the billing ledger" in shown
    assert len(shown) < len(REPLY) // 4
    assert " ".join(shown.split()) in r.context
    assert "…" in r.context  # what was cut is marked
    # The long reply did not crowd the other conversation's message out of the budget.
    assert other.source_id in {c.source_id for c in r.citations}


def test_a_long_reply_first_shown_by_a_small_part_gets_its_larger_part_when_room_is_left(
    stack,
):
    # Every ranked passage first gives a small part (so that one reply cannot crowd the
    # others out); what room is left after them shows the larger part that answers.
    client = stack.client()
    long = conversation(
        client,
        [
            sources_pb2.Message(role="user", content="Set up the service, please."),
            sources_pb2.Message(role="assistant", content=REPLY),
        ],
    )
    small = assemble(client, "which database for the billing ledger invoices", token_budget=120)
    large = assemble(client, "which database for the billing ledger invoices", token_budget=2000)
    shown = {}
    for name, r in (("small", small), ("large", large)):
        (part,) = [
            c.passage for c in r.citations if c.source_id == long.source_id and c.passage.char_end
        ]
        shown[name] = REPLY[part.char_start : part.char_end]
        assert "PostgreSQL for the billing ledger" in shown[name]
    assert len(shown["small"]) <= 200 < len(shown["large"]) <= 1200


def test_a_long_passage_first_gives_its_exchange_the_question_and_the_reply_it_ranked_for(
    stack,
):
    # A passage ranked for a long reply first gives both the user's message that shares the
    # query's words and that reply's small part: a budget with no room for the reply's larger
    # part still holds the answer, not only the question.
    client = stack.client()
    long = conversation(
        client,
        [
            sources_pb2.Message(role="user", content="Set up the billing ledger database."),
            sources_pb2.Message(role="assistant", content=REPLY),
        ],
    )
    r = assemble(client, "which database for the billing ledger invoices", token_budget=120)
    assert r.tokens_used <= 120
    cited = {
        (c.passage.message_start, c.passage.message_end): c.passage
        for c in r.citations
        if c.source_id == long.source_id
    }
    assert set(cited) == {(0, 0), (1, 1)}
    reply = cited[(1, 1)]
    assert "PostgreSQL for the billing ledger" in REPLY[reply.char_start : reply.char_end]
