"""The background embedding indexer yields to writes, and its backlog still drains: on a real
SQLite database with the real local model."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from sqlalchemy import select

from agentmem_kernel import config
from agentmem_kernel.config import Storage
from runtime_svc.domain.caller import Caller
from runtime_svc.retrieval.indexer import vector_store
from runtime_svc.retrieval.indexer.embedding_indexer import EmbeddingIndexer
from runtime_svc.services.clock import system_clock
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage import embedding_outbox, migrate, vectors
from runtime_svc.storage.db import open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.source_rows import sources
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.hybrid_support import MODEL_ID, local_model  # noqa: F401  (a fixture)
from tests.service.wiring import wired

CALLER = Caller("tenant-a", "alice", "user", frozenset())


class Writes:
    """Whether writes are going on, as the indexer asks the write path."""

    def __init__(self) -> None:
        self.busy = True

    def idle_for(self) -> float:
        return 0.0 if self.busy else math.inf


@pytest.fixture
def parts(tmp_path, local_model):  # noqa: F811
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    db = open_database(Storage(url=f"sqlite:///{tmp_path / 'i.db'}"), vectors=True)
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db, vectors_queued=lambda: None)
    inserts = wired(config.load(None, {}), uow).inserts  # permissive by default
    for text in ("the saxophone case is in the attic", "Priya prefers tea to coffee"):
        cmd = InsertCommand(content=text)
        inserts.commit_insert(CALLER, cmd, inserts.prepare(CALLER, cmd))
    # float32: the model's own vectors, so that a vector given to the wrong source shows
    # (the int8 copy's are within 0.97 of them: tests/test_query_embedding.py)
    yield db, uow, LocalEmbedder(local_model, MODEL_ID, int8_batches=False)
    db.dispose()


def backlog(db) -> int:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        return embedding_outbox.pending(conn)


def stored(db) -> int:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        return len(conn.execute(select(vectors.memory_vectors.c.source_pk)).all())


def test_the_indexer_waits_for_writes_to_pause(parts):
    db, uow, embedder = parts
    writes = Writes()
    indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64, writes.idle_for)
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(indexer.run_once()))
    worker.start()
    # While writes go on, nothing is embedded: the model would take well under this window.
    worker.join(timeout=1.5)
    assert worker.is_alive() and backlog(db) == 2 and stored(db) == 0
    writes.busy = False  # the write path falls quiet
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert result == [2] and backlog(db) == 0 and stored(db) == 2


def test_writes_that_never_pause_still_let_the_backlog_drain(parts):
    db, uow, embedder = parts
    writes = Writes()  # busy throughout
    indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64, writes.idle_for, max_hold_s=0.2)
    assert indexer.run_once() == 2  # held back past max_hold_s, it takes its share
    assert backlog(db) == 0 and stored(db) == 2


def test_each_source_gets_the_vector_of_its_own_text(parts, local_model):  # noqa: F811
    db, uow, embedder = parts
    inserts = wired(config.load(None, {}), uow).inserts
    # Of many lengths, out of length order, one text twice: taken in one batch, chunked.
    texts = [f"note {n}: " + "the garden and the weather " * (n % 7) for n in range(40)]
    texts.append(texts[3])
    for text in texts:
        cmd = InsertCommand(content=text)
        inserts.commit_insert(CALLER, cmd, inserts.prepare(CALLER, cmd))
    indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64, Writes().idle_for, max_hold_s=0)
    assert indexer.run_once() == len(texts) + 2 and backlog(db) == 0
    s, v = sources.c, vectors.memory_vectors.c
    with db.reader.connect() as conn:
        rows = conn.execute(
            select(s.generated_form, v.embedding).join(sources, sources.c.pk == v.source_pk)
        ).all()
    assert len(rows) == len(texts) + 2
    got = np.array([np.frombuffer(e, np.float32) for _, e in rows])
    expected = np.array(embedder._model.encode([t for t, _ in rows], normalize_embeddings=True))
    assert (got * expected).sum(axis=1).min() > 0.9999


def test_a_source_purged_while_its_chunk_is_embedded_gets_no_vector(parts):
    db, uow, embedder = parts
    with db.reader.connect() as conn:
        taken = vector_store.take(conn, 64, uow.window, MODEL_ID)
    assert len(taken) == 2
    with uow.write(CALLER.tenant_id) as tx:  # revoked or erased meanwhile
        vectors.purge(tx.conn, CALLER.tenant_id, taken[0].source_id)
    unit = [1.0] + [0.0] * (embedder.dimension - 1)
    with uow.write(CALLER.tenant_id) as tx:
        got = vector_store.store_many(tx.conn, [(item, [unit]) for item in taken], MODEL_ID, 1)
    assert got == 1 and backlog(db) == 0
    with db.reader.connect() as conn:
        ids = conn.execute(select(vectors.memory_vectors.c.source_id)).scalars().all()
    assert ids == [taken[1].source_id]


def test_a_stopping_indexer_leaves_what_it_did_not_embed_queued(parts):
    db, uow, embedder = parts
    indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64, Writes().idle_for)
    indexer.start()
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(indexer.run_once()))
    worker.start()
    indexer.stop()
    worker.join(timeout=60)
    assert result == [0] and backlog(db) == 2 and stored(db) == 0


def test_the_write_path_reports_how_long_it_has_been_idle(tmp_path):
    db = open_database(Storage(url=f"sqlite:///{tmp_path / 'g.db'}"))
    migrate.upgrade(db.writer)
    committer = GroupCommitter(UnitOfWork(db), max_batch=8)
    gate, running = threading.Event(), threading.Event()

    def job() -> None:
        running.set()
        gate.wait()

    blocker = committer.submit(job)
    running.wait(timeout=10)
    assert committer.idle_for() == 0.0  # a mutation is running
    gate.set()
    blocker.result(timeout=10)
    committer.close()  # the writer thread has finished every job
    assert committer.idle_for() > 0.0
    db.dispose()
