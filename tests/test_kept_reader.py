"""The reader connection kept between reads on the event loop's thread (SQLite), on a real
database: each read is still its own transaction, a read inside a read takes another
connection, and a connection that failed is replaced. On PostgreSQL every read takes one
from the pool."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from agentmem_kernel.config import Storage
from runtime_svc.storage import migrate
from runtime_svc.storage.db import KEPT_READER_CACHE_KIB, open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import database_url, drop_database

MODES = text("SELECT count(*) FROM thread_modes")


@pytest.fixture
def kept(tmp_path):
    url = database_url(tmp_path / "kept.db")
    db = open_database(Storage(url=url))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db)
    uow.keep_reader()
    yield uow, db
    uow.close()
    db.dispose()
    if not url.startswith("sqlite"):
        drop_database(url)


def _add_mode(db, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    with db.writer.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO thread_modes (tenant_id, thread_id, mode, revision, effective_at_us) "
                "VALUES ('t', :id, 'disabled', 1, 1)"
            ),
            {"id": thread_id},
        )


def _count(uow: UnitOfWork) -> int:
    with uow.read("t") as tx:
        return tx.conn.execute(MODES).scalar_one()


def test_each_read_sees_what_was_committed_since_the_one_before(kept):
    uow, db = kept
    assert _count(uow) == 0
    _add_mode(db, "a")
    assert _count(uow) == 1  # the kept connection holds no snapshot between reads
    sqlite = db.dialect == "sqlite"
    # Kept out of the pool between reads on SQLite; given back after each on PostgreSQL.
    assert db.reader.pool.checkedout() == (1 if sqlite else 0)
    if sqlite:  # the kept one has a larger page cache than the pool's
        with uow.read("t") as tx, db.reader.connect() as pooled:
            size = "PRAGMA cache_size"
            assert tx.conn.exec_driver_sql(size).scalar_one() == -KEPT_READER_CACHE_KIB
            assert pooled.exec_driver_sql(size).scalar_one() > -KEPT_READER_CACHE_KIB
    uow.close()
    assert db.reader.pool.checkedout() == 0


def test_a_read_inside_a_read_takes_another_connection_and_ends_only_its_own(kept):
    uow, db = kept
    with uow.read("t") as outer:
        assert outer.conn.execute(MODES).scalar_one() == 0
        _add_mode(db, "a")
        assert _count(uow) == 1  # its own transaction, begun after the insert
        with uow.read("t") as inner:
            assert inner.conn is not outer.conn
        assert outer.conn.in_transaction()
        if db.dialect == "sqlite":  # the outer read's snapshot is still the one it began with
            assert outer.conn.execute(MODES).scalar_one() == 0


def test_a_connection_that_failed_is_replaced_at_the_next_read(kept):
    uow, db = kept
    with uow.read("t") as tx:
        tx.conn.execute(MODES)
        failed = tx.conn
        failed.invalidate()  # what SQLAlchemy does when the driver's connection is lost
    _add_mode(db, "a")
    with uow.read("t") as tx:
        assert tx.conn is not failed or db.dialect != "sqlite"
        assert tx.conn.execute(MODES).scalar_one() == 1


def test_other_threads_read_through_the_pool(kept):
    uow, db = kept
    _count(uow)
    seen: list[object] = []

    def read_elsewhere() -> None:
        with uow.read("t") as tx:
            seen.append(tx.conn)
            seen.append(db.reader.pool.checkedout())

    with uow.read("t") as here:
        other = threading.Thread(target=read_elsewhere)
        other.start()
        other.join(timeout=30)
        assert seen and seen[0] is not here.conn
        assert seen[1] == 2  # this read's connection and the other thread's


def test_the_index_scan_settings_of_a_read_hold_for_its_scan(kept):
    """PostgreSQL: a read runs each statement as its own transaction (autocommit); the
    HNSW scan's settings, made by the statement before it, still hold when it runs."""
    from runtime_svc.retrieval.vectors import pg_hnsw

    uow, db = kept
    if db.dialect != "postgresql":
        pytest.skip("the HNSW scan is PostgreSQL's")
    with uow.read("t") as tx:
        pg_hnsw.configure(tx.conn, 300)
        assert tx.conn.exec_driver_sql("SHOW hnsw.ef_search").scalar_one() == "300"
