"""Ask over a coding session as it grows turn by turn (tests/data/ask_session.yaml): each
question answered by the part of the user's turn that answers it, cited by its message and
characters, or told that nothing stored answers it; never an unrelated passage or fact.
With hybrid retrieval off and on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentmem.v1 import facts_pb2, sources_pb2
from runtime_svc.domain.answers import NOTHING
from tests.hybrid_support import hybrid_settings, wait_embedded
from tests.test_appends import append

SESSION = yaml.safe_load(
    (Path(__file__).resolve().parent / "data" / "ask_session.yaml").read_text()
)
INSERTED = 10  # the first turns are inserted, the others appended one at a time
RIGHT = 0.9  # the share of answerable questions answered right, with or without meaning


def _messages(turns: list[str], first: int) -> list[sources_pb2.Message]:
    roles = ("user", "assistant")
    return [
        sources_pb2.Message(role=roles[(first + i) % 2], content=t) for i, t in enumerate(turns)
    ]


def _store(client) -> str:  # type: ignore[no-untyped-def]
    turns = SESSION["turns"]
    s = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(messages=_messages(turns[:INSERTED], 0))
    )
    revision = s.revision
    for i in range(INSERTED, len(turns)):
        revision = append(client, s.source_id, revision, _messages([turns[i]], i)).revision
    return str(s.source_id)


def _ask(client, question: str) -> facts_pb2.AskResponse:  # type: ignore[no-untyped-def]
    return client.Ask(facts_pb2.AskRequest(question=question, token_budget=300))


def _measure(client) -> tuple[int, list[str], list[str]]:  # type: ignore[no-untyped-def]
    """(right answers, wrong ones, unrelated ones): an answer is right when it holds the
    expected words, unrelated when it answers with anything else."""
    right, wrong, unrelated = 0, [], []
    turns = SESSION["turns"]
    for item in SESSION["answered"]:
        a = _ask(client, item["q"])
        if all(e.lower() in a.answer.lower() for e in item["expect"]):
            right += 1
            if a.answer_basis == "memories":  # cited by its message and characters
                p = a.provenance[0].passage
                assert p.message_start == p.message_end == item["turn"], item["q"]
                assert turns[item["turn"]][p.char_start : p.char_end] == a.answer
        elif a.answer_basis == "none":
            wrong.append(item["q"])
        else:
            unrelated.append(f"{item['q']} -> {a.answer_basis}")
    for question in SESSION["unanswered"]:
        a = _ask(client, question)
        if (a.answer, a.answer_basis) != (NOTHING, "none"):
            unrelated.append(f"{question} -> {a.answer_basis}")
    return right, wrong, unrelated


def _check(client) -> None:  # type: ignore[no-untyped-def]
    answered = SESSION["answered"]
    assert len(answered) >= 20 and len(SESSION["unanswered"]) >= 5
    right, wrong, unrelated = _measure(client)
    print(f"right {right}/{len(answered)}, unrelated {len(unrelated)}")
    assert right >= RIGHT * len(answered), wrong + unrelated
    assert unrelated == []


def test_a_growing_session_answers_by_words(stack):
    client = stack.client()
    _store(client)
    _check(client)


@pytest.mark.usefixtures("local_model", "vector_backend")
def test_a_growing_session_answers_by_words_and_meaning(make_stack):
    stack = make_stack(**hybrid_settings())
    client = stack.client()
    _store(client)
    wait_embedded(client)
    _check(client)
