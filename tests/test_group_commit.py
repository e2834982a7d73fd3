"""Group commit on a real SQLite database: jobs share a transaction but fail alone."""

from __future__ import annotations

import threading

import pytest

from agentmem.core.config import Storage
from agentmem.core.errors import AgentmemError
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.services.clock import system_clock
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork

CALLER = Caller("tenant-a", "alice", "user", frozenset())


@pytest.fixture
def parts(tmp_path):
    db = open_database(Storage(url=f"sqlite:///{tmp_path / 'g.db'}"))
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
