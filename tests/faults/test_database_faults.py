"""Faults in the database: PostgreSQL backends terminated under load, and a SQLite database
locked from outside longer than the busy timeout. Callers see only retryable statuses
(UNAVAILABLE, ABORTED) with ErrorInfo, never INTERNAL; nothing acknowledged is lost; the
service recovers by itself."""

from __future__ import annotations

import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from agentmem.client.errors import ReplayedSourceNotActive
from runtime_svc.storage.db import sqlite_connect
from tests.faults.conftest import wait_until
from tests.harness import reason
from tests.memory_helpers import classify, insert, search_ids
from tests.test_thread_mode import DISABLED, read, set_mode

ON_POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
RETRYABLE = {"UNAVAILABLE", "ABORTED"}


def _mixed_load(client, worker: int, stop: threading.Event, codes: Counter, acked: dict) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        request_id = f"w{worker}-{n}"
        try:
            r = insert(client, f"note {request_id} about harbours", request_id=request_id)
            acked[r.source_id] = request_id
            search_ids(client, "harbours")
            classify(client, r.source_id, 1, 2)  # cold
            read(client, f"t{worker}")
            codes["OK"] += 1
        except grpc.RpcError as e:
            codes[e.code().name] += 1
            assert reason(e) is not None, e


@pytest.mark.skipif(not ON_POSTGRES, reason="terminates PostgreSQL backends")
def test_postgres_backends_terminated_under_load(make_stack):
    stack = make_stack(gateway__default_deadline=2.0)
    codes: Counter[str] = Counter()
    acked: dict[str, str] = {}
    stop = threading.Event()
    terminate = (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    with ThreadPoolExecutor(4) as pool:
        clients = [stack.client() for _ in range(4)]
        workers = [
            pool.submit(_mixed_load, c, i, stop, codes, acked) for i, c in enumerate(clients)
        ]
        wait_until(lambda: codes["OK"] >= 5, what="load before the fault")
        killed = 0
        for _ in range(8):  # terminate every backend, eight times, under load
            killed += stack.sql(terminate)[0][0]
            seen = sum(codes.values())
            wait_until(lambda seen=seen: sum(codes.values()) >= seen + 4, what="more calls")
        stop.set()
        for w in workers:
            w.result()
    assert killed > 0
    assert set(codes) <= {"OK"} | RETRYABLE, codes
    assert codes["OK"] > 0
    # Recovered: every call succeeds again, and every acknowledged insert is there.
    client = stack.client()
    assert set_mode(client, DISABLED, 0, thread_id="after").revision == 1
    # Each acknowledged insert was made cold by the load (when that call went through): its
    # replay names the same source, as the first result or as a replay refused for its state.
    for source_id, request_id in acked.items():
        try:
            again = insert(client, f"note {request_id} about harbours", request_id=request_id)
        except ReplayedSourceNotActive as e:
            assert (e.metadata["source_id"], e.state) == (source_id, "cold")
        else:
            assert again.source_id == source_id


@pytest.mark.skipif(ON_POSTGRES, reason="SQLite's own locking")
def test_sqlite_locked_from_outside_is_aborted_then_recovers(make_stack):
    stack = make_stack(storage__busy_timeout_ms=200)
    client = stack.client()
    assert set_mode(client, DISABLED, 0, thread_id="kept").revision == 1
    blocker = sqlite_connect(stack.db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(grpc.RpcError) as e:
            set_mode(client, DISABLED, 0, thread_id="blocked", timeout=10)
        assert e.value.code() == grpc.StatusCode.ABORTED
        assert reason(e.value) == "CONCURRENT_MODIFICATION"
        assert read(client, "kept").revision == 1  # readers are not blocked (WAL)
    finally:
        blocker.rollback()
        blocker.close()
    assert read(client, "blocked").revision == 0  # the refused write changed nothing
    assert set_mode(client, DISABLED, 0, thread_id="blocked").revision == 1
