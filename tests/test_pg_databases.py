"""PostgreSQL test databases never outlive their run: a process drops every one it made
when it exits, also after a failure or SIGTERM, and a run starting on a shared server drops
old, unused ones that killed runs left behind, never one in use."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from tests.harness import ROOT
from tests.pg_leftovers import drop_leftovers

SERVER = os.environ.get("AGENTMEM_TEST_DATABASE_URL", "")
pytestmark = pytest.mark.skipif(not SERVER, reason="a PostgreSQL server")

MAKES_ONE = """
import os, signal, sys, time
from pathlib import Path
from tests.harness import database_url
print(database_url(Path("unused.db")), flush=True)
if sys.argv[1] == "fail":
    raise RuntimeError("a test failed")
if sys.argv[1] == "sigterm":
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(60)
"""


def admin():
    return create_engine(make_url(SERVER).set(database="postgres"), isolation_level="AUTOCOMMIT")


def exists(name: str) -> bool:
    engine = admin()
    try:
        with engine.connect() as conn:
            found = conn.exec_driver_sql(
                "SELECT 1 FROM pg_database WHERE datname = %(n)s", {"n": name}
            ).first()
        return found is not None
    finally:
        engine.dispose()


@pytest.mark.parametrize("ending", ["fail", "sigterm", "exit"])
def test_a_process_drops_the_databases_it_made_however_it_ends(ending):
    run = subprocess.run(
        [sys.executable, "-c", MAKES_ONE, ending],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    url = run.stdout.splitlines()[0]
    name = make_url(url).database
    assert name.startswith("agentmem_test_")
    assert run.returncode != 0 if ending != "exit" else run.returncode == 0
    assert not exists(name), f"{ending}: {name} was left behind"


def test_leftovers_are_dropped_only_when_unused_and_old():
    prefix = f"agentmem_test_sweep{secrets.token_hex(3)}_"
    idle, busy, young = (f"{prefix}{kind}" for kind in ("idle", "busy", "young"))
    engine = admin()
    try:
        with engine.connect() as conn:
            for name in (idle, busy, young):
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        holder = create_engine(make_url(SERVER).set(database=busy))
        with holder.connect():  # someone is using it
            assert drop_leftovers(SERVER, older_than_s=3600, prefix=prefix) == []  # all young
            dropped = drop_leftovers(SERVER, older_than_s=0, prefix=prefix)
        holder.dispose()
        assert dropped == [idle, young]
        assert exists(busy)
    finally:
        with engine.connect() as conn:
            for name in (idle, busy, young):
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        engine.dispose()
