"""SQLite's write-ahead log is checkpointed by a thread of its own, not by the commit that
fills it (`runtime_svc.storage.wal_checkpoints`): a write's caller does not wait for the
pages earlier writes left in the log."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from agentmem_kernel.config import Storage
from runtime_svc.storage import migrate
from runtime_svc.storage.db import Database, open_database
from runtime_svc.storage.scrub import Scrubber
from runtime_svc.storage.unit_of_work import UnitOfWork
from runtime_svc.storage.wal_checkpoints import WalCheckpointer

PAGE = 4096
PAGES_PER_WRITE = 800  # more than SQLite's own threshold (1,000 pages) in two writes


@pytest.fixture
def db(tmp_path: Path):
    db = open_database(Storage(url=f"sqlite:///{tmp_path / 'c.db'}"), checkpoints_apart=True)
    with db.writer.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE filler (pk INTEGER PRIMARY KEY, body BLOB)")
    yield db, tmp_path / "c.db"
    db.dispose()


def fill(db: Database, writes: int) -> None:
    for _ in range(writes):
        with db.writer.begin() as conn:
            conn.execute(
                text("INSERT INTO filler (body) VALUES (randomblob(:n))"),
                [{"n": PAGE}] * PAGES_PER_WRITE,
            )


def test_a_commit_leaves_the_log_to_the_checkpointer(db):
    db, path = db
    checkpoints = WalCheckpointer(db, interval_s=0)
    try:
        fill(db, 4)
        # No commit checkpointed: every page is still in the log, none in the file.
        assert Path(f"{path}-wal").stat().st_size > 4 * PAGES_PER_WRITE * PAGE
        assert path.stat().st_size < PAGES_PER_WRITE * PAGE
        checkpoints.committed()
        assert checkpoints.wait_for(1, timeout=30)
        assert path.stat().st_size > 4 * PAGES_PER_WRITE * PAGE  # copied into the file
    finally:
        checkpoints.close()


def test_the_unit_of_work_tells_of_each_commit(tmp_path):
    db = open_database(Storage(url=f"sqlite:///{tmp_path / 'u.db'}"), checkpoints_apart=True)
    migrate.upgrade(db.writer)
    told: list[int] = []
    uow = UnitOfWork(db, committed=lambda: told.append(1))
    try:
        with uow.write("tenant-a"):
            pass
        with uow.batch():
            with uow.write("tenant-a"):
                pass
            with uow.write("tenant-b"):
                pass
        assert len(told) == 2  # one write, one batch of two
        with pytest.raises(RuntimeError), uow.write("tenant-a"):
            raise RuntimeError("undone")
        assert len(told) == 2
    finally:
        db.dispose()


class _Recording:
    """A DB-API connection that records each statement and whether the checkpoint turn was
    held while it ran."""

    def __init__(self, db: Database) -> None:
        self.db, self.ran = db, []

    def cursor(self) -> _Recording:
        return self

    def execute(self, sql: str) -> _Recording:
        self.ran.append((sql, self.db.checkpoint_turn.locked()))
        return self

    def fetchone(self) -> tuple[int, int, int]:
        return (0, 0, 0)

    def fetchall(self) -> list[tuple[int, int, int]]:
        return [self.fetchone()]

    def close(self) -> None:
        pass


def test_the_checkpoint_thread_and_an_erasure_scrub_take_turns(db, monkeypatch):
    """SQLite finds a checkpoint busy at once, without waiting, while another one runs: an
    erasure's scrub (which truncates the log) waits for the thread's checkpoint to end."""
    db, _ = db
    recording = _Recording(db)
    monkeypatch.setattr(db.writer, "raw_connection", lambda: recording)
    checkpoints = WalCheckpointer(db, interval_s=0)
    try:
        checkpoints.committed()
        assert checkpoints.wait_for(1, timeout=30)
    finally:
        checkpoints.close()
    assert Scrubber(db, busy_timeout_ms=5000).scrub(wait_ms=100)
    held = {sql: locked for sql, locked in recording.ran if "wal_checkpoint" in sql}
    assert held == {"PRAGMA wal_checkpoint(PASSIVE)": True, "PRAGMA wal_checkpoint(TRUNCATE)": True}
