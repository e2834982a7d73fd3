"""An agent's session never stalls the embedding indexer: a conversation inserted, then turns
appended one after another faster than the indexer takes them, gets every passage its vector
once, and the memories of other tenants queued behind it get theirs too (real local model,
real servers, SQLite and PostgreSQL with pgvector)."""

from __future__ import annotations

import logging
import time

import pytest

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ADMIN_B
from tests.hybrid_support import hybrid_settings, retrieval_status, wait_embedded
from tests.test_appends import append, start, turns

SESSION_TURNS = [
    "Let us add a webhook for failed payments to the billing service.",
    "The retry queue should back off exponentially up to an hour.",
    "Please log every refund with its order number.",
    "Can we store invoices as PDF files in the bucket?",
    "Rename the settings module to config before the release.",
]


def _vector_rows(stack, source_id):
    return stack.sql(
        "SELECT passage, count(*) FROM memory_vectors WHERE source_id = :s GROUP BY passage",
        s=source_id,
    )


def test_appends_in_a_row_never_stall_the_indexer(make_stack, local_model, vector_backend, caplog):
    stack = make_stack(**hybrid_settings())
    client = stack.client()
    other = stack.client(ADMIN_B)
    caplog.set_level(logging.WARNING, logger="agentmem.runtime.embeddings")
    session = start(client)
    revision = session.revision
    # Each append lands before the indexer has taken the previous one: one queued place
    # per append and per revision of the same conversation.
    for text in SESSION_TURNS:
        revision = append(client, session.source_id, revision, turns([text])).revision
    dentist = other.insert_memory(content="My dentist is Dr. Hansen")
    wait_embedded(client, timeout=60)
    wait_embedded(other, timeout=60)
    # Every passage has one vector, stored once; no batch failed on the way.
    rows = _vector_rows(stack, session.source_id)
    assert rows and all(n == 1 for _, n in rows)
    assert [r.getMessage() for r in caplog.records if "failed" in r.getMessage()] == []
    # Another tenant's memory, queued behind the session, is found by meaning.
    hits = other.search_memories(query="who is my tooth doctor").hits
    assert [h.source_id for h in hits][:1] == [dentist.source_id]
    assert retrieval_status(client).embeddings_pending == 0


def test_a_lagging_or_failing_indexer_is_reported_where_people_look(
    make_stack, local_model, vector_backend, monkeypatch, capsys
):
    """GetCapabilities, `agentmem doctor` and `capabilities` say when search by meaning is
    behind and why; before, doctor said all was well while nothing was embedded."""
    stack = make_stack(**hybrid_settings())
    client = stack.client()
    saved = client.insert_memory(content="The bike lock code is written on the fridge")
    wait_embedded(client)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    assert "warn" not in _doctor(stack.address, capsys)
    now_us = int(time.time() * 1e6)
    # A place failing for two minutes, set aside: as the runtime records it.
    (pk,) = stack.sql("SELECT pk FROM sources WHERE source_id = :s", s=saved.source_id)[0]
    stack.sql(
        "INSERT INTO vector_outbox (tenant_id, source_pk, source_id, enqueued_at_us, attempts,"
        " not_before_us, failed_at_us, last_error) VALUES ('tenant-a', :pk, :sid, :at, 5,"
        " :later, :now, 'ValueError')",
        pk=pk,
        sid=saved.source_id,
        at=now_us - 120_000_000,
        later=now_us + 3_600_000_000,
        now=now_us,
    )
    status = retrieval_status(client)
    assert status.embeddings_pending == 1 and status.embeddings_set_aside == 1
    assert status.embeddings_lag_seconds >= 120
    assert status.embeddings_last_error == "ValueError"
    assert abs(status.embeddings_last_error_at.ToMicroseconds() - now_us) < 1_000_000
    warnings = [line for line in _doctor(stack.address, capsys) if line.startswith("warn")]
    assert len(warnings) == 1
    assert "search by meaning is 2 min behind" in warnings[0]
    assert "1 memories could not be embedded" in warnings[0] and "ValueError" in warnings[0]
    assert retrieval_status(stack.client(ADMIN_B)).embeddings_pending == 0  # per tenant


def _doctor(address: str, capsys) -> list[str]:
    with pytest.raises(SystemExit) as e:
        main(["doctor", "--addr", address])
    said = capsys.readouterr().out
    assert e.value.code == 0, said  # a warning does not fail doctor; a problem does
    return said.splitlines()
