"""Group commit on a real database (SQLite, or PostgreSQL with AGENTMEM_TEST_DATABASE_URL): jobs
share a transaction but fail alone."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from sqlalchemy import event, select

from agentmem.contract.errors import AgentmemError
from agentmem_kernel import config
from agentmem_kernel.config import Storage
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.sources import Status
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.retrieval.indexer import vector_store
from runtime_svc.retrieval.indexer.embedding_indexer import EmbeddingIndexer
from runtime_svc.services.clock import system_clock
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage import embedding_outbox, migrate, vectors
from runtime_svc.storage.db import open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import database_url, wait_until
from tests.service.wiring import wired

CALLER = Caller("tenant-a", "alice", "user", frozenset())


@pytest.fixture
def parts(tmp_path):
    db = open_database(Storage(url=database_url(tmp_path / "g.db")))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db)
    woken: list[str] = []
    modes = ThreadModes(
        uow, Journal(EventRetention(1000), woken.append), system_clock, Mode.ENABLED
    )
    yield uow, modes, woken
    db.dispose()


def test_a_failing_job_is_undone_alone_and_leaves_no_gap(parts):
    uow, modes, woken = parts
    committer = GroupCommitter(uow, max_batch=16)
    gate = threading.Event()
    blocker = committer.submit(gate.wait)  # holds the writer so the next jobs form one batch
    futures = [
        committer.submit(modes.set, CALLER, "t1", 0, Mode.DISABLED),
        committer.submit(modes.set, CALLER, "t1", 0, Mode.ENABLED),  # stale: fails alone
        committer.submit(modes.set, CALLER, "t2", 0, Mode.DISABLED),
    ]
    gate.set()
    blocker.result(timeout=10)
    first, stale, third = futures
    assert first.result(timeout=10).current.revision == 1
    with pytest.raises(AgentmemError) as e:
        stale.result(timeout=10)
    assert e.value.reason == "REVISION_MISMATCH"
    assert third.result(timeout=10).receipt.sequence == 2  # no gap where the failure was
    with uow.read("tenant-a") as tx:
        assert [e.sequence for e in tx.events.after(0, [], 10)] == [1, 2]
        assert tx.tenant.get().receipt_sequence == 2
    assert woken == ["tenant-a", "tenant-a"]
    committer.close()


def test_results_arrive_only_after_the_commit(parts):
    uow, modes, _ = parts
    committer = GroupCommitter(uow, max_batch=8)
    change = committer.submit(modes.set, CALLER, "t9", 0, Mode.DISABLED).result(timeout=10)
    with uow.read("tenant-a") as tx:  # another connection sees it: it is committed
        assert tx.thread_modes.get("t9").revision == change.current.revision == 1
    committer.close()


def test_a_caller_that_went_away_does_not_stop_the_writer(parts):
    uow, modes, _ = parts
    committer = GroupCommitter(uow, max_batch=8)
    gate = threading.Event()
    blocker = committer.submit(gate.wait)
    abandoned = committer.submit(modes.set, CALLER, "gone", 0, Mode.DISABLED)
    assert abandoned.cancel()  # the caller gave up before it ran
    gate.set()
    blocker.result(timeout=10)
    after = committer.submit(modes.set, CALLER, "next", 0, Mode.DISABLED).result(timeout=10)
    assert after.current.revision == 1
    with uow.read("tenant-a") as tx:
        assert tx.thread_modes.get("gone") is None
    committer.close()


def test_tasks_on_an_event_loop_get_the_outcomes_of_their_batch(parts):
    uow, modes, _ = parts
    committer = GroupCommitter(uow, max_batch=16)
    gate = threading.Event()

    async def main():  # type: ignore[no-untyped-def]
        blocker = committer.submit(gate.wait)  # the next jobs queue up and form one batch
        jobs = [
            asyncio.ensure_future(committer.run(modes.set, CALLER, "a1", 0, Mode.DISABLED)),
            asyncio.ensure_future(committer.run(modes.set, CALLER, "a1", 0, Mode.ENABLED)),
            asyncio.ensure_future(committer.run(modes.set, CALLER, "gone", 0, Mode.DISABLED)),
            asyncio.ensure_future(committer.run(modes.set, CALLER, "a2", 0, Mode.DISABLED)),
        ]
        await asyncio.sleep(0)  # every task has queued its job
        jobs[2].cancel()  # its caller went away before it ran: the job is skipped
        gate.set()
        await asyncio.wrap_future(blocker)
        return await asyncio.gather(*jobs, return_exceptions=True)

    first, stale, gone, fourth = asyncio.run(main())
    assert first.current.revision == 1
    assert isinstance(stale, AgentmemError) and stale.reason == "REVISION_MISMATCH"
    assert isinstance(gone, asyncio.CancelledError)
    assert fourth.receipt.sequence == 2  # no gap where the failure was
    with uow.read("tenant-a") as tx:  # another connection sees them: committed
        assert tx.thread_modes.get("a2").revision == 1
        assert tx.thread_modes.get("gone") is None
    committer.close()


def test_inserts_in_a_batch_see_the_policy_and_the_receipts_written_before(parts):
    uow, _, _ = parts
    inserts = wired(config.load(None, {}), uow).inserts  # permissive by default

    def insert(text: str):  # type: ignore[no-untyped-def]
        cmd = InsertCommand(content=text)
        return committer.submit(inserts.commit_insert, CALLER, cmd, inserts.prepare(CALLER, cmd))

    committer = GroupCommitter(uow, max_batch=16)
    gate = threading.Event()
    blocker = committer.submit(gate.wait)
    before = insert("the shed door is blue")  # reads the policy in force: permissive
    stale = committer.submit(inserts.set_policy, CALLER, 5, InsertPolicy.REVIEW_PENDING)
    changed = committer.submit(inserts.set_policy, CALLER, 0, InsertPolicy.REVIEW_PENDING)
    after = insert("the shed roof leaks")
    retry = Caller("tenant-a", "alice", "user", frozenset(), request_id="req-7")
    cmd = InsertCommand(content="the gate squeaks")
    original, retried = (
        committer.submit(inserts.commit_insert, retry, cmd, inserts.prepare(retry, cmd))
        for _ in range(2)
    )
    gate.set()
    blocker.result(timeout=10)
    assert before.result(timeout=10).status is Status.ACTIVE
    with pytest.raises(AgentmemError):
        stale.result(timeout=10)
    assert changed.result(timeout=10).revision == 1
    assert after.result(timeout=10).status is Status.PENDING_REVIEW
    # A retry in the same batch as its original answers with the original's receipt.
    assert retried.result(timeout=10).deduplicated
    assert retried.result().receipt == original.result(timeout=10).receipt
    committer.close()


def test_journal_rows_read_in_a_batch_and_undone_with_a_savepoint_are_still_written(parts):
    uow, modes, _ = parts
    committer = GroupCommitter(uow, max_batch=16)
    gate = threading.Event()

    def read_then_fail() -> None:
        with uow.write("tenant-a") as tx:
            seen = [r.sequence for r in tx.receipts.page("", 0, 10)]  # sees the earlier job's
            assert seen == [1]
            raise RuntimeError("this job fails after reading")

    blocker = committer.submit(gate.wait)
    first = committer.submit(modes.set, CALLER, "j1", 0, Mode.DISABLED)
    failing = committer.submit(read_then_fail)
    second = committer.submit(modes.set, CALLER, "j2", 0, Mode.DISABLED)
    gate.set()
    blocker.result(timeout=10)
    assert first.result(timeout=10).receipt.sequence == 1
    with pytest.raises(RuntimeError):
        failing.result(timeout=10)
    assert second.result(timeout=10).receipt.sequence == 2
    with uow.read("tenant-a") as tx:  # the first job's rows, undone with the failing job's
        assert [r.sequence for r in tx.receipts.all()] == [1, 2]  # savepoint, were rewritten
        assert [e.sequence for e in tx.events.after(0, [], 10)] == [1, 2]
    committer.close()


def test_a_batch_queues_its_inserts_for_embedding_in_one_statement(tmp_path):
    """Each insert with embeddings on queues its source; in a group commit the places are
    written together as it commits (one statement, not one round trip per insert in the
    writer thread), and a failing insert's place, or a revoked source's, is not kept."""
    db = open_database(Storage(url=database_url(tmp_path / "q.db")))
    migrate.upgrade(db.writer)
    woken: list[int] = []
    uow = UnitOfWork(db, vectors_queued=lambda: woken.append(1))
    use = wired(config.load(None, {}), uow)
    inserts = use.inserts
    outbox_inserts: list[str] = []

    def count(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("INSERT INTO VECTOR_OUTBOX"):
            outbox_inserts.append(statement)

    event.listen(db.writer, "before_cursor_execute", count)

    def insert(text: str, thread_id: str = ""):  # type: ignore[no-untyped-def]
        cmd = InsertCommand(content=text, thread_id=thread_id)
        return inserts.commit_insert(CALLER, cmd, inserts.prepare(CALLER, cmd))

    def queue_then_fail() -> None:
        with uow.write("tenant-a") as tx:
            tx.embedding_queue.enqueue(10**9, "src_never")
            raise RuntimeError("this job fails after queueing")

    def insert_then_revoke() -> str:
        source_id = insert("the old key is under the mat").source_id
        use.lifecycle.revoke(CALLER, source_id, "moved")
        return source_id

    use.thread_modes.set(CALLER, "off", 0, Mode.DISABLED)
    committer = GroupCommitter(uow, max_batch=16)
    gate = threading.Event()
    blocker = committer.submit(gate.wait)  # the next jobs queue up and form one batch
    jobs = [committer.submit(insert, f"the blue shed number {i}") for i in range(3)]
    disabled = committer.submit(insert, "not remembered", "off")  # its thread is disabled
    failing = committer.submit(queue_then_fail)
    revoked = committer.submit(insert_then_revoke)
    jobs += [committer.submit(insert, f"the red barn number {i}") for i in range(3)]
    gate.set()
    blocker.result(timeout=10)
    with pytest.raises(AgentmemError):
        disabled.result(timeout=10)
    with pytest.raises(RuntimeError):
        failing.result(timeout=10)
    revoked_id = revoked.result(timeout=10)
    wanted = [job.result(timeout=10).source_id for job in jobs]
    committer.close()
    with db.reader.connect() as conn:
        queued = (
            conn.execute(
                select(embedding_outbox.vector_outbox.c.source_id).order_by(
                    embedding_outbox.vector_outbox.c.seq
                )
            )
            .scalars()
            .all()
        )
    assert queued == wanted  # in commit order; none of a failed job, not the revoked one
    assert revoked_id not in queued
    # The revoke flushed the places queued before it; the rest went in at the commit.
    assert len(outbox_inserts) == 2
    db.dispose()


class _FixedEmbedder:
    """The same unit vector for every text (what is stored does not matter here)."""

    model_id = "test:fixed"
    dimension = 4

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]


@pytest.mark.skipif(
    not os.environ.get("AGENTMEM_TEST_DATABASE_URL"), reason="SQLite has one writer at a time"
)
def test_inserts_do_not_wait_for_the_indexer_storing_vectors(tmp_path, monkeypatch):
    """On PostgreSQL the indexer's transaction (its vectors' index inserts included) holds no
    row lock an insert of the tenant needs: inserts go on while it is open."""
    db = open_database(Storage(url=database_url(tmp_path / "s.db")))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db, vectors_queued=lambda: None)
    inserts = wired(config.load(None, {}), uow).inserts

    def insert(text: str):  # type: ignore[no-untyped-def]
        cmd = InsertCommand(content=text)
        return inserts.commit_insert(CALLER, cmd, inserts.prepare(CALLER, cmd))

    first = insert("the ladder hangs in the garage").source_id
    storing, release = threading.Event(), threading.Event()
    store_many = vector_store.store_many

    def held_open(*args):  # type: ignore[no-untyped-def]
        stored = store_many(*args)
        storing.set()  # its transaction is open until released
        release.wait(30)
        return stored

    monkeypatch.setattr(vector_store, "store_many", held_open)
    indexer = EmbeddingIndexer(db, uow, _FixedEmbedder(), system_clock, 64)
    worker = threading.Thread(target=indexer.run_once)
    worker.start()
    committer = GroupCommitter(uow, max_batch=16)
    try:
        assert storing.wait(30)
        later = committer.submit(insert, "the paint is on the top shelf")
        later_id = later.result(timeout=10).source_id  # committed while the indexer stores
    finally:
        release.set()
        worker.join(timeout=30)
        committer.close()
    with db.reader.connect() as conn:
        embedded = conn.execute(select(vectors.memory_vectors.c.source_id)).scalars().all()
        queued = conn.execute(select(embedding_outbox.vector_outbox.c.source_id)).scalars().all()
    assert embedded == [first] and queued == [later_id]
    db.dispose()


@pytest.mark.skipif(
    not os.environ.get("AGENTMEM_TEST_DATABASE_URL"), reason="SQLite has one writer at a time"
)
def test_two_runtimes_store_one_tenants_vectors_one_after_the_other(tmp_path):
    """A vector's seq comes from a sequence as it is inserted: two runtimes' indexers storing
    one tenant's vectors side by side could commit a smaller seq after a larger one, which
    held rows brought up to date by seq would never see. The second store waits for the
    first (here it gives up at once instead of waiting)."""
    from sqlalchemy.exc import OperationalError

    db = open_database(Storage(url=database_url(tmp_path / "s.db")))
    migrate.upgrade(db.writer)
    try:
        with db.writer.connect() as first, db.writer.connect() as second:
            first.begin()
            vectors.store_turn(first, "tenant-a")
            second.begin()
            second.exec_driver_sql("SET LOCAL lock_timeout = '50ms'")
            vectors.store_turn(second, "tenant-b")  # another tenant's store goes on
            with pytest.raises(OperationalError, match="lock timeout"):
                vectors.store_turn(second, "tenant-a")
            second.rollback()
            first.commit()
            second.begin()
            vectors.store_turn(second, "tenant-a")  # its turn once the first committed
            second.rollback()
    finally:
        db.dispose()


@pytest.mark.skipif(
    not os.environ.get("AGENTMEM_TEST_DATABASE_URL"), reason="SQLite has one writer at a time"
)
def test_a_purge_and_the_indexer_storing_vectors_never_deadlock(tmp_path):
    """A group commit purges the sources of several tenants in one transaction, in the order
    its writes came; the indexer stores several tenants' vectors. Each waits for the other's
    turn on a tenant (the indexer one tenant at a time, in a transaction of its own), never
    for a row the other holds while it holds one the other needs."""
    from sqlalchemy import text

    db = open_database(Storage(url=database_url(tmp_path / "s.db")))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db, vectors_queued=lambda: None)
    inserts = wired(config.load(None, {}), uow).inserts

    def insert(tenant: str, words: str) -> str:
        caller = Caller(tenant, "alice", "user", frozenset())
        cmd = InsertCommand(content=words)
        return inserts.commit_insert(caller, cmd, inserts.prepare(caller, cmd)).source_id

    # Texts of one length: the indexer takes both in one chunk, tenant a's first.
    in_a = insert("tenant-a", "the paint sits up on the shelf")
    in_b = insert("tenant-b", "the ladder hangs in the garage")
    indexer = EmbeddingIndexer(db, uow, _FixedEmbedder(), system_clock, 64)
    failed: list[BaseException] = []

    def index() -> None:
        try:
            indexer.run_once()
        except BaseException as e:
            failed.append(e)

    worker = threading.Thread(target=index)
    try:
        with db.writer.connect() as purge, db.reader.connect() as watch:
            purge.begin()
            vectors.purge(purge, "tenant-b", in_b)
            worker.start()

            def indexer_waits() -> bool:
                waiting = watch.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND wait_event_type = 'Lock'"
                    )
                ).scalar_one()
                watch.rollback()
                return bool(waiting)

            # It stored tenant a's vectors, and waits for tenant b's turn.
            wait_until(indexer_waits, 30, "the indexer waiting for the purge")
            vectors.purge(purge, "tenant-a", in_a)  # a deadlock is detected here, if any
            purge.commit()
        worker.join(timeout=30)
        assert not failed, failed
        with db.reader.connect() as conn:
            stored = conn.execute(select(vectors.memory_vectors.c.source_id)).scalars().all()
            queued = (
                conn.execute(select(embedding_outbox.vector_outbox.c.source_id)).scalars().all()
            )
        assert stored == [] and queued == []  # both purged, whichever stored first
    finally:
        worker.join(timeout=30)
        db.dispose()
