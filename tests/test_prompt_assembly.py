"""AssemblePrompt through the public API: the block is chosen from eligible passages only,
ExplainRetrieval with the same budget explains exactly the sources it cites, and budgets are
counted in the configured tokenizer's unit (o200k_base BPE by default)."""

from __future__ import annotations

import random

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import capabilities_pb2, foreign_pb2, retrieval_pb2, sources_pb2
from runtime_svc.adapters import tokenizers
from tests.memory_helpers import COLD, assemble, classify, insert

WORDS = ["lake", "kayak", "paint", "fair", "sister", "garden", "violin", "recipe"]
NAMES = ["Ann", "Bob"]


def insert_conversation(client, rng, marker=""):
    sent = Timestamp(seconds=1_683_000_000 + rng.randint(0, 10**7))
    messages = []
    for i in range(rng.randint(4, 9)):
        words = " ".join(rng.sample(WORDS, 3))
        ask = "?" if rng.random() < 0.3 else "."
        content = f"We talked about the {words} {marker}{i}{ask}"
        messages.append(
            sources_pb2.Message(
                role="user" if i % 2 else "assistant",
                name=NAMES[i % 2],
                content=content,
                sent_at=sent,
            )
        )
    return client.InsertMemory(sources_pb2.InsertMemoryRequest(messages=messages))


def explain_prompt(client, query, token_budget):
    return client.ExplainRetrieval(
        retrieval_pb2.ExplainRetrievalRequest(query=query, limit=10, token_budget=token_budget)
    )


def test_cited_sources_are_exactly_the_explained_selection_and_only_eligible_ones(stack):
    client = stack.client()
    rng = random.Random(3)
    for _ in range(12):
        insert_conversation(client, rng)
    for _ in range(6):
        insert(client, "Ann keeps notes on the " + " ".join(rng.sample(WORDS, 2)))
    cold = insert_conversation(client, rng, marker="zqcold")
    classify(client, cold.source_id, cold.revision, COLD)
    revoked = insert_conversation(client, rng, marker="zqrevoked")
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=revoked.source_id))
    gone = {cold.source_id, revoked.source_id}
    for _ in range(12):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3))) + rng.choice(["", " Ann", "?"])
        for budget in (60, 150, 400, 2000):
            block = assemble(client, query, token_budget=budget)
            cited = {c.source_id for c in block.citations}
            entries = explain_prompt(client, query, budget).entries
            selected = {e.source_id for e in entries if e.included}
            assert cited == selected, (query, budget)
            assert all(e.reason == retrieval_pb2.REASON_SELECTED for e in entries if e.included)
            assert not cited & gone
            assert "zqcold" not in block.context and "zqrevoked" not in block.context
            assert block.tokens_used <= budget
            if block.context:
                assert block.prompt_record_id


def test_budgets_are_counted_in_o200k_tokens_by_default(stack):
    client = stack.client()
    caps = client.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    assert caps.retrieval.prompt_tokenizer == "o200k_base"
    rng = random.Random(5)
    for _ in range(8):
        insert_conversation(client, rng)
    block = assemble(client, "lake kayak", token_budget=300)
    o200k = tokenizers.encoding("o200k_base")
    assert o200k is not None
    assert block.tokens_used == len(o200k.encode_ordinary(block.context)) <= 300
    assert block.context.count("\n[") >= 1  # a citation line per conversation


@pytest.mark.parametrize("unit", ["words", "cl100k_base"])
def test_the_tokenizer_is_configurable(make_stack, unit):
    stack = make_stack(retrieval__tokenizer=unit)
    client = stack.client()
    caps = client.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    assert caps.retrieval.prompt_tokenizer == unit
    insert(client, "Ann paints the lake every summer at the fair")
    block = assemble(client, "lake", token_budget=200)
    assert block.tokens_used == tokenizers.counter(unit).count(block.context)
