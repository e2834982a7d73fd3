"""ExplainRetrieval's debug log line says how search runs for the query: the rankers the plan
chose, by name, and no query text."""

from __future__ import annotations

import logging

import pytest

from tests.memory_helpers import explain, insert


@pytest.mark.parametrize(
    ("held_min", "lexical"), [(5_000, "postings-in-tables"), (0, "postings-held-dense")]
)
def test_an_explanation_logs_the_plan_at_debug_level(make_stack, caplog, held_min, lexical):
    stack = make_stack(search__held_min_entries=held_min)
    client = stack.client()
    insert(client, "the zqkayak club meets on fridays by the river")
    with caplog.at_level(logging.DEBUG, logger="agentmem.runtime.retrieval"):
        explain(client, "when does the zqkayak club meet?")
        explain(client, "zqnothing")
    said = [r for r in caplog.records if r.getMessage() == "retrieval plan"]
    assert [r.plan for r in said] == [{"lexical": lexical}, {"lexical": "no-match"}]
    assert all("zqkayak" not in repr(vars(r)) for r in said)
