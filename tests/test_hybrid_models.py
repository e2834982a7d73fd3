"""Hybrid retrieval across models and backends: an OpenAI-compatible embeddings endpoint
(served locally), a model change that re-embeds in the background without mixing models,
and PostgreSQL without pgvector (lexical-only, and it says so)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import create_engine

from agentmem.v1 import retrieval_pb2
from agentmem_kernel import config
from tests.harness import Stack, base_settings, database_url
from tests.hybrid_support import MODEL_ID, hybrid_settings, retrieval_status, wait_embedded
from tests.memory_helpers import explain, insert, search_ids

DIM = 8
FAKE_ID = "openai_compatible:fake-embed"
SAXOPHONE = "I play my saxophone every Sunday"
PIANO = "I bought a second-hand upright piano last spring"
TEA = "I prefer tea over coffee"


def fake_vector(text: str) -> list[float]:
    """A deterministic 8-dimensional embedding: one hashed bucket per word."""
    v = [0.0] * DIM
    for word in text.lower().split():
        v[hashlib.sha256(word.encode()).digest()[0] % DIM] += 1.0
    return v


class FakeEmbeddings(BaseHTTPRequestHandler):
    """Answers /v1/embeddings like an OpenAI-compatible server. Batches (more than one
    input, as the background indexer sends) wait for `gate`; single queries never wait."""

    gate = threading.Event()
    requests: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.requests.append(body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if len(inputs) > 1:
            FakeEmbeddings.gate.wait(60)
        payload = json.dumps(
            {
                "object": "list",
                "model": body["model"],
                "data": [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t)}
                    for i, t in enumerate(inputs)
                ],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeEmbeddings.requests = []
    FakeEmbeddings.gate.set()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    FakeEmbeddings.gate.set()
    server.shutdown()


def fake_settings(endpoint: str) -> dict[str, object]:
    return {
        "retrieval__embeddings": "openai_compatible",
        "retrieval__endpoint": endpoint,
        "retrieval__model": "fake-embed",
        "retrieval__min_similarity": -1.0,
    }


def stored_models(stack: Stack) -> set[tuple[str, int]]:
    return set(stack.sql("SELECT DISTINCT model_id, dimension FROM memory_vectors"))


def test_vectors_from_an_openai_compatible_endpoint(make_stack, endpoint, vector_backend):
    stack = make_stack(**fake_settings(endpoint))
    client = stack.client()
    saxophone = insert(client, SAXOPHONE).source_id
    insert(client, TEA)
    wait_embedded(client)
    status = retrieval_status(client)
    assert (status.mode, status.embedding_model, status.embedding_dimension) == (
        "hybrid",
        FAKE_ID,
        DIM,
    )
    assert stored_models(stack) == {(FAKE_ID, DIM)}
    sent = [r for r in FakeEmbeddings.requests if len(r["input"]) > 1 or r["input"][0] == TEA]
    assert sent and all(r["model"] == "fake-embed" for r in FakeEmbeddings.requests)
    entries = {e.source_id: e for e in explain(client, "saxophone Sunday").entries}
    assert entries[saxophone].matched_by == retrieval_pb2.MATCHED_BY_BOTH
    assert entries[saxophone].semantic_score > 0.5


def test_a_model_change_re_embeds_in_the_background_without_mixing(
    loop_thread, tmp_path, endpoint, local_model, vector_backend
):
    db = tmp_path / "models.db"
    url = database_url(db)  # both runtimes, one after the other, on one database
    first = Stack(
        loop_thread,
        config.load(None, base_settings(db, **_dotted(hybrid_settings()), **{"storage.url": url})),
        db,
    )
    first.start()
    client = first.client()
    ids = [insert(client, text).source_id for text in (SAXOPHONE, PIANO, TEA)]
    wait_embedded(client)
    assert stored_models(first) == {(MODEL_ID, 384)}
    first.stop(drop=False)

    FakeEmbeddings.gate.clear()  # the new model's batches wait: re-embedding is under way
    second = Stack(
        loop_thread,
        config.load(
            None, base_settings(db, **_dotted(fake_settings(endpoint)), **{"storage.url": url})
        ),
        db,
    )
    second.start()
    try:
        client = second.client()
        assert retrieval_status(client).embeddings_pending == 3
        # meanwhile: ranked by words only, never by the old model's vectors
        entries = explain(client, "saxophone").entries
        assert [e.source_id for e in entries] == [ids[0]]
        assert entries[0].matched_by == retrieval_pb2.MATCHED_BY_LEXICAL
        assert entries[0].semantic_score == 0
        assert search_ids(client, "what musical instrument is mine") == []
        FakeEmbeddings.gate.set()
        wait_embedded(client)
        assert stored_models(second) == {(FAKE_ID, DIM)}  # the old model's vectors are gone
        assert ids[0] in search_ids(client, "saxophone")
        assert explain(client, "every Sunday saxophone").entries[0].semantic_score > 0.5
    finally:
        FakeEmbeddings.gate.set()
        second.stop()


def _dotted(settings: dict[str, object]) -> dict[str, object]:
    return {k.replace("__", "."): v for k, v in settings.items()}


def _machine_postgres() -> str:
    url = os.environ.get(
        "AGENTMEM_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    try:
        engine = create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            has = conn.exec_driver_sql(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).first()
        engine.dispose()
    except Exception:
        pytest.skip("no PostgreSQL server on 127.0.0.1:5432")
    if has:
        pytest.skip("this PostgreSQL server has pgvector")
    return url


def test_postgres_without_pgvector_runs_lexical_only_and_says_so(make_stack, monkeypatch, caplog):
    monkeypatch.setenv("AGENTMEM_TEST_DATABASE_URL", _machine_postgres())
    with caplog.at_level(logging.WARNING, logger="agentmem.runtime"):
        stack = make_stack(**hybrid_settings())
    assert any(
        "hybrid retrieval is off" in r.getMessage() and "pgvector" in r.getMessage()
        for r in caplog.records
    )
    client = stack.client()
    status = retrieval_status(client)
    assert (status.mode, status.lexical_only_reason) == ("lexical", "vector_store_unavailable")
    s = insert(client, SAXOPHONE).source_id
    assert search_ids(client, "saxophone") == [s]
    assert (
        explain(client, "saxophone").entries[0].matched_by == retrieval_pb2.MATCHED_BY_UNSPECIFIED
    )
    assert stack.sql("SELECT count(*) FROM vector_outbox") == [(0,)]


def test_vectors_stored_per_source_are_embedded_again_per_passage(
    loop_thread, tmp_path, local_model, vector_backend
):
    if vector_backend != "sqlite":
        pytest.skip("the downgrade is written once, against SQLite")
    from alembic import command

    from runtime_svc.storage.db import sqlite_engine
    from runtime_svc.storage.migrate import alembic_config
    from tests.test_hybrid import insert_conversation, long_conversation

    db = tmp_path / "passages.db"
    url = database_url(db)
    settings = config.load(
        None, base_settings(db, **_dotted(hybrid_settings()), **{"storage.url": url})
    )
    first = Stack(loop_thread, settings, db)
    first.start()
    client = first.client()
    conv = insert_conversation(client, long_conversation(5, "Do you play anything?", SAXOPHONE))
    wait_embedded(client)
    first.stop(drop=False)

    # the release before: one vector per source
    engine = sqlite_engine(url)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0010")
        pk = conn.exec_driver_sql("SELECT pk FROM sources WHERE source_id = ?", (conv,)).scalar()
        conn.exec_driver_sql(
            "INSERT INTO memory_vectors (source_pk, model_id, tenant_id, source_id, "
            "source_revision, dimension, embedding, signature, created_at_us) "
            "VALUES (?, ?, 'tenant-a', ?, 1, 384, ?, ?, 1)",
            (pk, MODEL_ID, conv, b"\0" * 1536, b"\0" * 48),
        )
    engine.dispose()

    second = Stack(loop_thread, settings, db)  # upgrades, then queues what has no vector
    second.start()
    try:
        client = second.client()
        wait_embedded(client)
        rows = second.sql(
            "SELECT count(*), count(DISTINCT passage) FROM memory_vectors WHERE source_id = :s",
            s=conv,
        )
        assert rows == [(29, 29)]  # the first two messages share a passage (the first asks)
        hit = {
            h.source_id: h
            for h in client.SearchMemories(
                retrieval_pb2.SearchMemoriesRequest(
                    query="what musical instrument do I own", limit=5
                )
            ).hits
        }[conv]
        assert (hit.passage.message_start, hit.passage.message_end) == (4, 5)
    finally:
        second.stop()
