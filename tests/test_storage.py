"""Storage: migrations match the models and run by hand; SQLite runs in WAL mode."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from alembic import command
from sqlalchemy import create_engine

from agentmem_kernel.config import Storage
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database, sqlite_connect
from tests.harness import ROOT


def test_migrations_match_the_models(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    db = open_database(Storage(url=url))
    migrate.upgrade(db.writer)
    cfg = migrate.alembic_config()
    with db.writer.begin() as conn:
        cfg.attributes["connection"] = conn
        command.check(cfg)  # raises when autogenerate would find a difference
    db.dispose()


def test_alembic_upgrade_head_by_hand(tmp_path):
    url = f"sqlite:///{tmp_path / 'hand.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "alembic", "-x", f"url={url}", "upgrade", "head"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    engine = create_engine(url)
    with engine.connect() as conn:
        tables = {
            r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert {"thread_modes", "events", "audit_receipts", "tenant_state"} <= tables


@pytest.mark.skipif(bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL")), reason="SQLite only")
def test_sqlite_runs_in_wal_mode(stack):
    with sqlite_connect(stack.db_path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
