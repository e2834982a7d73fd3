"""The PostgreSQL server with pgvector that hybrid tests start (`pgserver`) is stopped when
its fixture ends, its data folder deleted after it: a test run leaves no server behind."""

from __future__ import annotations

from pathlib import Path

import psutil
from sqlalchemy import create_engine

from tests.harness import wait_until
from tests.hybrid_support import pgvector_server


def test_the_pgvector_server_is_stopped_when_its_fixture_ends() -> None:
    with pgvector_server() as url:
        engine = create_engine(url)
        with engine.connect() as conn:
            data = Path(conn.exec_driver_sql("SHOW data_directory").scalar_one())
        engine.dispose()
        postmaster = int((data / "postmaster.pid").read_text().splitlines()[0])
        assert psutil.pid_exists(postmaster)
    # pg_ctl's stop waits for the server, so nothing is left to wait for; a server left
    # running is a defect, not a slow stop (a short grace only for the process table).
    gone = wait_until(lambda: not _running(postmaster), 5, "the pgvector server stopped")
    assert gone and not data.exists()


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
