"""Long agent sessions: conversations as hosts keep them (limits that fit a session,
configurable), through real servers."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import sources_pb2
from tests.harness import reason
from tests.memory_helpers import list_sources

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
