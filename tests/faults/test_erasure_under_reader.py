"""SQLite erasure while another connection holds a read snapshot: the erasure returns at
once, readback reports its physical part as pending (never clean while the erased text can
still be read from the database or WAL files), the runtime finishes it by itself as soon as
the reader is gone, also after a SIGKILL and restart, and says so with an event and a
receipt. The files' bytes are read to check."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from agentmem.client import connect
from agentmem.v1 import audit_pb2, events_pb2, foreign_pb2
from tests.faults.conftest import wait_until
from tests.harness import ADMIN_A, ROOT, free_port
from tests.memory_helpers import insert

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL")), reason="SQLite files"
)
MARKER = "zqxerasedwordkvt"
NEEDLE = MARKER[3:].encode()  # a suffix: full-text terms are stored prefix-compressed
PENDING = foreign_pb2.PHYSICAL_ERASURE_PENDING
COMPLETE = foreign_pb2.PHYSICAL_ERASURE_COMPLETE


def files_hold(db: Path, needle: bytes) -> list[str]:
    """The database's files (the database, its WAL) whose bytes hold `needle`."""
    return [
        p.name for p in db.parent.glob(db.name + "*") if p.is_file() and needle in p.read_bytes()
    ]


READER = """
import sys
from runtime_svc.storage.db import sqlite_connect
conn = sqlite_connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
print(conn.execute("SELECT count(*) FROM sources").fetchone()[0], flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


class Reader:
    """An outside connection holding a read transaction (a snapshot of the database), in a
    process of its own: a file of the database opened and closed by this process would drop
    its locks (POSIX locks belong to a process, not to a descriptor)."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", READER, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert int(self.proc.stdout.readline()) > 0  # the snapshot is held

    def close(self) -> None:
        self.proc.communicate("done\n", timeout=30)
        assert self.proc.returncode == 0

    def kill(self) -> None:
        """Gone without closing (closing the last connection would checkpoint)."""
        self.proc.kill()
        self.proc.wait(timeout=30)


def readback(client, source_id: str):
    return client.ReadbackSource(foreign_pb2.ReadbackSourceRequest(source_id=source_id))


def stored_with_marker(client) -> str:
    s = insert(client, f"I like the {MARKER} lantern", save_intent="explicit_user_request")
    for i in range(20):  # more pages, more WAL frames
        insert(client, f"filler note {i} about harbours and kites")
    return s.source_id


def erase(client, source_id: str) -> None:
    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=source_id, expected_revision=1))


def pending_gauge(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("agentmem_erasures_pending "):
                return float(line.split()[-1])
    raise AssertionError("no agentmem_erasures_pending gauge")


def test_erasure_under_a_reader_is_pending_until_the_reader_is_gone(services):
    db = Path(services.url.removeprefix("sqlite:///"))
    metrics_port = free_port()
    services.configure(runtime={"metrics_listen": f"127.0.0.1:{metrics_port}"})
    runtime = services.runtime()
    gateway = services.gateway(runtime.address)
    with connect(gateway.address, ADMIN_A.token, timeout=10) as client:
        source_id = stored_with_marker(client)
        assert files_hold(db, NEEDLE)
        reader = Reader(db)
        try:
            erase(client, source_id)
            r = readback(client, source_id)
            assert r.physical_erasure == PENDING
            assert not r.clean and list(r.residue) == ["database_file", "wal"]
            assert not r.HasField("scrubbed_at")
            assert files_hold(db, NEEDLE)  # what readback says is pending is really there
            assert pending_gauge(metrics_port) == 1
            head = client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).length
            finished = threading.Event()
            events = client.WatchEvents(
                events_pb2.WatchEventsRequest(
                    kinds=[events_pb2.EVENT_KIND_SOURCE_ERASURE_FINISHED]
                ),
                timeout=60,
            )

            def watch() -> None:
                for item in events:
                    if item.event.source_erasure_finished.source_id == source_id:
                        finished.set()
                        return

            threading.Thread(target=watch, daemon=True).start()
            insert(client, "a later write while the reader is still there")
            assert readback(client, source_id).physical_erasure == PENDING
        finally:
            reader.close()
        assert finished.wait(30), "no source_erasure_finished event"
        events.cancel()
        r = readback(client, source_id)
        assert r.physical_erasure == COMPLETE and r.clean and not r.residue
        assert r.HasField("scrubbed_at")
        assert not files_hold(db, NEEDLE)
        assert pending_gauge(metrics_port) == 0
        insert(client, "a write after the scrub")
        assert not files_hold(db, NEEDLE)
        receipts = client.ListAuditReceipts(
            audit_pb2.ListAuditReceiptsRequest(target_id=source_id)
        ).receipts
        assert [x.action for x in receipts][-2:] == ["source.erase", "source.erase.finish"]
        assert client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).length > head


def test_a_pending_erasure_is_finished_at_start_up_after_a_sigkill(services):
    db = Path(services.url.removeprefix("sqlite:///"))
    port = free_port()
    runtime = services.runtime(port)
    gateway = services.gateway(runtime.address)
    with connect(gateway.address, ADMIN_A.token, timeout=10) as client:
        source_id = stored_with_marker(client)
        reader = Reader(db)
        try:
            erase(client, source_id)
            assert readback(client, source_id).physical_erasure == PENDING
            runtime.kill()  # SIGKILL while the erasure's physical part is pending
        finally:
            reader.kill()
        assert files_hold(db, NEEDLE)  # nobody scrubbed it: both are gone
        services.runtime(port)  # the gateway reconnects to the same address

        def complete():
            r = readback(client, source_id)
            return r if r.physical_erasure == COMPLETE else None

        r = wait_until(complete, 30, "the erasure finished after the restart")
        assert r.clean and r.HasField("scrubbed_at")
        assert not files_hold(db, NEEDLE)
        logged = [
            e.event.WhichOneof("payload")
            for e in _take(client.WatchEvents(events_pb2.WatchEventsRequest(), timeout=10))
        ]
        assert logged.count("source_erasure_finished") == 1


def _take(stream):
    """The events up to the current head (a watch otherwise waits for more)."""
    out = []
    try:
        for item in stream:
            out.append(item)
            if item.event.WhichOneof("payload") == "source_erasure_finished":
                break
    finally:
        stream.cancel()
    return out
