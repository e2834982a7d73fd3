"""The database's disk filling up (SQLite on a small tmpfs): writes are refused with
RESOURCE_EXHAUSTED / STORAGE_FULL (logged at error level, counted in a metric), reads go
on, writes succeed again once there is room, and nothing acknowledged is lost, also across
a restart."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentmem.client import Client
from agentmem.v1 import sources_pb2
from tests.faults.conftest import Services
from tests.harness import ADMIN_A, free_port, reason
from tests.memory_helpers import insert

ON_POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
pytestmark = pytest.mark.skipif(
    ON_POSTGRES or os.geteuid() != 0, reason="a SQLite file on a tmpfs mounted as root"
)


@contextlib.contextmanager
def small_disk(path: Path, size: str = "3m") -> Iterator[Path]:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path) -> Path:
    """Fills what is left of the disk with one file; returns it (delete it to make room)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as f, contextlib.suppress(OSError):  # ENOSPC
        while True:
            f.write(b"\0" * 4096)
    return filler


def storage_full_count(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith('agentmem_storage_full_total{dialect="sqlite"}'):
                return float(line.split()[-1])
    return 0.0


def test_a_full_disk_refuses_writes_keeps_reads_and_recovers(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        services = Services(tmp_path)
        services.url = f"sqlite:///{disk}/agentmem.db"
        metrics_port = free_port()
        services.configure(runtime={"metrics_listen": f"127.0.0.1:{metrics_port}"})
        runtime = services.runtime()
        gateway = services.gateway(runtime.address)
        client = Client(gateway.address, ADMIN_A.token, timeout=10)
        try:
            acked = {insert(client, f"note {i} about harbours").source_id for i in range(5)}
            filler = fill(disk)
            refused = None
            for i in range(200):  # until the database's own slack is used up too
                try:
                    r = insert(client, f"more {i} harbours " + "x" * 2000, request_id=f"r{i}")
                    acked.add(r.source_id)
                except grpc.RpcError as e:
                    refused = e
                    break
            assert refused is not None, "the disk never filled"
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.details()
            assert reason(refused) == "STORAGE_FULL"
            assert "harbours" not in refused.details()
            # Reads go on.
            for source_id in acked:
                assert client.GetSource(sources_pb2.GetSourceRequest(source_id=source_id))
            assert len(client.ListSources(sources_pb2.ListSourcesRequest()).sources) == len(acked)
            # Logged at error level, counted.
            lines = [
                json.loads(x) for x in runtime.log.read_text().splitlines() if x.startswith("{")
            ]
            assert any(x["level"] == "error" and "no room left" in x["msg"] for x in lines), lines[
                -5:
            ]
            assert storage_full_count(metrics_port) >= 1
            # Room again: writes succeed.
            filler.unlink()
            acked.add(insert(client, "after the disk had room again").source_id)
        finally:
            client.close()
            for p in (gateway, runtime):
                p.terminate()
        # Nothing acknowledged was lost, across a restart.
        runtime = services.runtime()
        gateway = services.gateway(runtime.address)
        with Client(gateway.address, ADMIN_A.token, timeout=10) as client:
            listed = {
                s.source_id for s in client.ListSources(sources_pb2.ListSourcesRequest()).sources
            }
        assert listed == acked
        services.stop()
