"""Driver errors in the catalogue's words: a full disk on either backend is STORAGE_FULL,
lock conflicts CONCURRENT_MODIFICATION, a lost server UNAVAILABLE."""

from __future__ import annotations

import psycopg.errors
from sqlalchemy.exc import OperationalError

from agentmem.contract.errors import AgentmemError, Reason
from runtime_svc.storage.db import sqlite_connect
from runtime_svc.storage.db_errors import storage_error


def translated(orig: Exception) -> Exception:
    return storage_error(OperationalError("INSERT ...", {}, orig))


def test_postgresql_disk_full_is_storage_full():
    e = translated(psycopg.errors.DiskFull('could not extend file "base/1/2": No space left'))
    assert isinstance(e, AgentmemError) and e.reason is Reason.STORAGE_FULL


def test_sqlite_full_is_storage_full(tmp_path):
    conn = sqlite_connect(tmp_path / "tiny.db")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 2")  # the database may not grow: SQLITE_FULL
    try:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * 10)
    except Exception as orig:
        e = translated(orig)
    else:
        raise AssertionError("the insert did not fail")
    assert isinstance(e, AgentmemError) and e.reason is Reason.STORAGE_FULL


def test_other_failures_keep_their_reasons():
    conflict = translated(psycopg.errors.SerializationFailure("could not serialize access"))
    assert isinstance(conflict, AgentmemError)
    assert conflict.reason is Reason.CONCURRENT_MODIFICATION
    gone = translated(psycopg.errors.AdminShutdown("terminating connection"))
    assert isinstance(gone, AgentmemError) and gone.reason is Reason.UNAVAILABLE
