"""The embedding indexer cannot wedge: a source that fails is held back and then set aside
while the others are embedded; tenants take turns; a failure of the queue itself backs the
indexer off whatever wakes it. On a real database (SQLite, or PostgreSQL with the suite's
variable), with a stand-in embedder so that one text can be made to fail."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from sqlalchemy import select, text, update

from agentmem_kernel import config
from agentmem_kernel.config import Storage
from runtime_svc.domain.caller import Caller
from runtime_svc.retrieval.indexer.embedding_indexer import EmbeddingIndexer
from runtime_svc.services.clock import system_clock
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage import embedding_outbox, migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import database_url, drop_database
from tests.service.wiring import wired

A = Caller("tenant-a", "alice", "user", frozenset())
B = Caller("tenant-b", "bob", "user", frozenset())
outbox = embedding_outbox.vector_outbox


class Embedder:
    """A unit vector for every text; a text holding `poison` fails, as a model or its
    tokenizer may fail on one input."""

    model_id = "test:unit"
    dimension = 4

    def __init__(self, poison: str = "") -> None:
        self.poison = poison
        self.calls = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.poison and any(self.poison in t for t in texts):
            raise ValueError("this input cannot be embedded")
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]


@pytest.fixture
def queue(tmp_path):
    url = database_url(tmp_path / "q.db")
    db = open_database(Storage(url=url), vectors=True)
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db, vectors_queued=lambda: None)
    inserts = wired(config.load(None, {}), uow).inserts

    def insert(caller: Caller, content: str) -> str:
        cmd = InsertCommand(content=content)
        return inserts.commit_insert(caller, cmd, inserts.prepare(caller, cmd)).source_id

    yield db, uow, insert
    uow.close()
    db.dispose()
    drop_database(url)


def places(db) -> dict[str, tuple[int, int, str]]:  # type: ignore[no-untyped-def]
    """source id → (attempts, not before, last error) of every queued place."""
    o = outbox.c
    with db.reader.connect() as conn:
        rows = conn.execute(select(o.source_id, o.attempts, o.not_before_us, o.last_error))
        return {sid: (n, due, err) for sid, n, due, err in rows}


def embedded(db) -> set[str]:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        return set(conn.execute(text("SELECT source_id FROM memory_vectors")).scalars())


def test_a_source_that_fails_is_held_back_then_set_aside_while_the_others_are_embedded(
    queue, caplog
):
    db, uow, insert = queue
    good = [insert(A, f"the blue shed number {i}") for i in range(3)]
    bad = insert(A, "a poison pill among the memories")
    later = insert(B, "the red barn by the river")
    embedder = Embedder(poison="poison")
    indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64)
    caplog.set_level(logging.WARNING, logger="agentmem.runtime.embeddings")
    assert indexer.run_once() == 5
    assert embedded(db) == {*good, later}
    attempts, due, error = places(db)[bad]
    assert (attempts, error) == (1, "ValueError") and due > system_clock()
    with db.reader.connect() as conn:
        status = embedding_outbox.backlog(conn, A.tenant_id)
    assert (status.pending, status.set_aside, status.last_error) == (1, 0, "ValueError")
    assert indexer.run_once() == 0  # held back: not taken again before its time
    # Each time it is due it fails again, until it is set aside (and said so, once).
    for _ in range(embedding_outbox.SET_ASIDE_AFTER - 1):
        with uow.derived_write() as conn:
            conn.execute(update(outbox).values(not_before_us=0))
        assert indexer.run_once() == 1
    with db.reader.connect() as conn:
        status = embedding_outbox.backlog(conn, A.tenant_id)
    assert (status.pending, status.set_aside) == (1, 1)
    assert places(db)[bad][1] > system_clock() + 3000 * 1_000_000  # tried again in an hour
    said = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in said] == ["embedding a source failed; set aside"]
    assert "poison" not in caplog.text  # the log names the source, never its text


def test_a_conversation_queued_again_while_taken_stays_queued_for_its_new_entries(queue):
    """A source queued again between the indexer's take and its store keeps its place, so
    the entries it gained meanwhile are embedded by the next take (and only those)."""
    db, uow, insert = queue
    sid = insert(A, "the green gate needs oil")
    from runtime_svc.retrieval.indexer import vector_store

    with db.reader.connect() as conn:
        taken = vector_store.take(conn, 8, uow.window, Embedder.model_id)
    with uow.write(A.tenant_id) as tx:  # an append or an approval queues it again
        tx.embedding_queue.enqueue(taken[0].source_pk, sid)
    with uow.derived_write() as conn:
        got = vector_store.store_many(conn, [(taken[0], [[1.0, 0.0, 0.0, 0.0]])], "test:unit", 1)
    assert got == 1 and sid in embedded(db)
    assert list(places(db)) == [sid]  # still queued: its next take finds what it lacks
    with db.reader.connect() as conn:
        again = vector_store.take(conn, 8, uow.window, Embedder.model_id)
    assert [q.entries for q in again] == [()]  # nothing new: it embeds nothing twice


def test_a_place_left_queued_is_aged_from_its_take_not_its_first_queueing(queue):
    """The backlog's lag counts what still waits: a conversation queued an hour ago, taken
    now and grown while taken, waits only for what came after the take."""
    db, uow, insert = queue
    sid = insert(A, "the green gate needs oil")
    hour_ago_us, taken_us = 1_000_000, 3_601_000_000
    with uow.derived_write() as conn:
        conn.execute(update(outbox).values(enqueued_at_us=hour_ago_us))
    from runtime_svc.retrieval.indexer import vector_store

    with db.reader.connect() as conn:
        taken = vector_store.take(conn, 8, uow.window, Embedder.model_id, now_us=taken_us)
    with uow.write(A.tenant_id) as tx:  # an append queues it again while it is taken
        tx.embedding_queue.enqueue(taken[0].source_pk, sid)
    with uow.derived_write() as conn:
        vector_store.store_many(conn, [(taken[0], [[1.0, 0.0, 0.0, 0.0]])], "test:unit", 1)
    with db.reader.connect() as conn:
        backlog = embedding_outbox.backlog(conn)
    assert backlog.pending == 1
    assert backlog.lag_s(taken_us + 5_000_000) == pytest.approx(5.0)  # not an hour


def test_tenants_take_turns(queue):
    db, _uow, insert = queue
    burst = [insert(A, f"a note about the garden, number {i}") for i in range(6)]
    other = insert(B, "the spare key is under the mat")
    with db.reader.connect() as conn:
        first = [p.source_id for p in embedding_outbox.take(conn, 2, system_clock())]
    assert first == [burst[0], other]


def test_a_failing_queue_backs_off_however_often_it_is_woken(queue, caplog):
    db, uow, _insert = queue
    with uow.derived_write() as conn:  # the queue cannot be read
        conn.execute(text("ALTER TABLE vector_outbox RENAME TO vector_outbox_gone"))
    indexer = EmbeddingIndexer(db, uow, Embedder(), system_clock, 64)
    caplog.set_level(logging.WARNING, logger="agentmem.runtime.embeddings")

    def failures() -> int:
        return sum("could not be read" in r.getMessage() for r in caplog.records)

    indexer.start()
    try:
        deadline = time.monotonic() + 10
        while failures() == 0 and time.monotonic() < deadline:
            indexer.wake()  # commits keep coming
        assert failures() == 1
        # A second of wake-ups: the back-off (0.5 s, then 1 s) holds, whatever wakes it.
        until = time.monotonic() + 1.0
        woken = 0
        while time.monotonic() < until:
            indexer.wake()
            woken += 1
        assert woken > 1000 and failures() <= 2
    finally:
        stopper = threading.Thread(target=indexer.stop)
        stopper.start()
        stopper.join(timeout=30)


class Counting(Embedder):
    """Counts every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


def test_a_session_appended_to_is_embedded_once_per_passage(tmp_path):
    """Appends queue their conversation again while it waits: the indexer embeds each
    passage once, whatever the number of appends (before, each append's place embedded the
    same passages again, and a batch holding two places of one source failed for good)."""
    from runtime_svc.domain.sources import Message
    from runtime_svc.services.appends import AppendCommand

    url = database_url(tmp_path / "s.db")
    db = open_database(Storage(url=url), vectors=True)
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db, vectors_queued=lambda: None)
    cases = wired(config.load(None, {}), uow)
    try:
        first = InsertCommand(messages=[Message("user", "Plan the garden shed.")])
        revision = cases.inserts.commit_insert(A, first, cases.inserts.prepare(A, first))
        sid, rev = revision.source_id, revision.revision
        for i in range(5):
            turn = (Message("user", f"Step {i}: paint the shed wall number {i}."),)
            rev = cases.appends.append(A, AppendCommand(sid, rev, turn)).revision
        embedder = Counting()
        indexer = EmbeddingIndexer(db, uow, embedder, system_clock, 64)
        while indexer.run_once():
            pass
        with db.reader.connect() as conn:
            passages = conn.execute(
                text("SELECT count(*) FROM memory_vectors WHERE source_id = :s"), {"s": sid}
            ).scalar_one()
            assert embedding_outbox.pending(conn) == 0
        assert passages > 1 and embedder.texts == passages
    finally:
        uow.close()
        db.dispose()
        drop_database(url)
