"""The services as real processes: `agentmem up`, runtime crash and restart, SIGTERM drain."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
import yaml

from agentmem.client import connect
from agentmem.v1 import memory_service_pb2_grpc, thread_mode_pb2
from agentmem_kernel import internal_call
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from tests.harness import (
    ADMIN_A,
    INTERNAL_TOKEN,
    KEYS,
    ROOT,
    SERVER_ENV,
    Process,
    free_port,
    health,
    reason,
    wait_until,
)
from tests.test_thread_mode import DISABLED, ENABLED, read, set_mode


@pytest.fixture
def config_file(tmp_path):
    f = tmp_path / "agentmem.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "auth": {"api_keys": [k.config() for k in KEYS]},
                "gateway": {"grace": 5.0},
                "runtime": {"grace": 5.0},
            }
        )
    )
    return f


@pytest.fixture
def processes(tmp_path, config_file):
    started: list[Process] = []
    env = {"AGENTMEM_INTERNAL__TOKEN": INTERNAL_TOKEN}

    def runtime(port: int = 0, debug: bool = False) -> Process:
        p = Process(
            [
                "runtime",
                "--config",
                str(config_file),
                "--listen",
                f"127.0.0.1:{port}",
                "--data-dir",
                str(tmp_path / "data"),
            ],
            {**env, "AGENTMEM_LOGGING__LEVEL": "DEBUG" if debug else "INFO"},
            tmp_path,
            "runtime",
        )
        started.append(p)
        return p

    def gateway(runtime_address: str) -> Process:
        p = Process(
            [
                "gateway",
                "--config",
                str(config_file),
                "--listen",
                "127.0.0.1:0",
                "--runtime",
                runtime_address,
            ],
            env,
            tmp_path,
            "gateway",
        )
        started.append(p)
        return p

    yield runtime, gateway
    for p in started:
        p.stop()


def test_runtime_crash_gives_unavailable_then_recovers_without_loss(processes):
    start_runtime, start_gateway = processes
    port = free_port()
    runtime = start_runtime(port)
    gateway = start_gateway(runtime.address)
    client = connect(gateway.address, ADMIN_A.token)
    acknowledged = {
        f"t{i}": set_mode(client, DISABLED, 0, thread_id=f"t{i}").revision for i in range(20)
    }

    runtime.kill()  # SIGKILL: no drain, no goodbye
    with pytest.raises(grpc.RpcError) as e:
        set_mode(client, ENABLED, 1, thread_id="t0", timeout=10)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE and reason(e.value) == "UNAVAILABLE"

    # An idempotent read keeps retrying within its deadline; a CAS write is not retried.
    pending_read = client.ReadThreadMemoryMode.future(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t0"), timeout=30
    )
    with pytest.raises(grpc.RpcError) as e:
        set_mode(client, ENABLED, 1, thread_id="t0", timeout=30)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert not pending_read.done()

    start_runtime(port)
    assert pending_read.result().revision == 1
    for thread_id, revision in acknowledged.items():
        r = read(client, thread_id)
        assert (r.mode, r.revision) == (DISABLED, revision)
    assert set_mode(client, ENABLED, 1, thread_id="t0").revision == 2
    client.close()


def wait_for_log(process: Process, needle: str, count: int = 1) -> None:
    """Waits until the process has logged `needle` `count` times (it writes as it goes)."""

    def logged() -> bool:
        assert process.proc.poll() is None, process.log.read_text()[-2000:]
        return process.log.read_text().count(needle) >= count

    wait_until(logged, 30, f"{needle!r} logged {count} times")


def direct_read(victim: str, address: str) -> None:
    """A read sent straight to the process (to a runtime as the gateway would send it)."""
    request = thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="fresh")
    if victim == "gateway":
        with connect(address, ADMIN_A.token) as client:
            client.ReadThreadMemoryMode(request, timeout=10)
        return
    context = rpb.CallContext(tenant_id="tenant-a", principal_id="alice", scopes=["memory.read"])
    with grpc.insecure_channel(address) as ch:
        memory_service_pb2_grpc.MemoryServiceStub(ch).ReadThreadMemoryMode(
            request, metadata=internal_call.metadata(INTERNAL_TOKEN, context), timeout=10
        )


@pytest.mark.parametrize("victim", ["gateway", "runtime"])
def test_sigterm_drains_in_flight_calls(processes, tmp_path, victim):
    start_runtime, start_gateway = processes
    runtime = start_runtime(debug=True)
    gateway = start_gateway(runtime.address)
    client = connect(gateway.address, ADMIN_A.token)
    assert read(client).revision == 0  # migrated and serving

    # Hold the database's write lock so that the calls below stay in flight.
    blocker = sqlite3.connect(tmp_path / "data" / "agentmem.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(set_mode, client, DISABLED, 0, f"d{i}", "", 30) for i in range(4)]
        wait_for_log(runtime, '"msg": "call started"', count=4 + 1)
        target = gateway if victim == "gateway" else runtime
        target.proc.send_signal(signal.SIGTERM)
        wait_for_log(target, '"msg": "draining"')
        with pytest.raises(grpc.RpcError) as e:  # new calls are refused while draining
            direct_read(victim, target.address)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        blocker.rollback()
        blocker.close()
        revisions = [f.result().revision for f in futures]  # in-flight calls completed
    assert revisions == [1, 1, 1, 1]
    assert target.wait() == 0
    client.close()


def test_agentmem_up_serves_and_prints_a_dev_credential(tmp_path):
    port_file = tmp_path / "gw.port"
    env = {**os.environ, **SERVER_ENV, "AGENTMEM_DEV_TOKEN": ""}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentmem.cli.main",
            "up",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            str(tmp_path / "data"),
            "--port-file",
            str(port_file),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        token = re.search(r"AGENTMEM_TOKEN=(\S+)", lines[2]).group(1)
        address = re.search(r"AGENTMEM_ADDR=(\S+)", lines[2]).group(1)
        assert health(address) == 1
        with connect(address, token) as client:
            assert set_mode(client, DISABLED, 0).revision == 1
        result = subprocess.run(
            [sys.executable, "-m", "agentmem.cli.main", "thread-mode", "get", "t1", "--json"],
            cwd=ROOT,
            env={**os.environ, "AGENTMEM_ADDR": address, "AGENTMEM_TOKEN": token},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0 and '"mode": "disabled"' in result.stdout
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
