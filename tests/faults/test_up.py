"""`agentmem up` as a supervisor: it uses the configured storage.url, restarts a runtime killed
under it (with backoff, and says so), and on SIGTERM drains the gateway before the runtime."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentmem.client import connect
from tests.faults.conftest import wait_until
from tests.harness import ADMIN_A, ROOT, SERVER_ENV
from tests.test_thread_mode import DISABLED, read, set_mode

UP = [sys.executable, "-m", "agentmem.cli.main", "up", "--listen", "127.0.0.1:0"]
RUNTIME_SET_STARTED = (
    '"msg": "call started", "method": "/agentmem.v1.MemoryService/SetThreadMemoryMode"'
)
GATEWAY_DRAINING = '"service": "gateway", "logger": "agentmem.serving", "msg": "draining"'


def _children(pid: int) -> dict[str, int]:
    """The service processes `up` started: {"runtime": pid, "gateway": pid}."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:  # each started by its module name: python -m runtime_svc, …
            for name, module in (("runtime", "runtime_svc"), ("gateway", "protocol_svc")):
                if module.encode() in argv:
                    found[name] = int(entry.name)
    return found


def _log_lines(path: Path) -> list[dict]:
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def test_up_uses_storage_url_restarts_a_dead_runtime_and_drains_gateway_first(services):
    services.configure(
        storage={"url": services.url, "busy_timeout_ms": 30_000}, logging={"level": "DEBUG"}
    )
    port_file, stderr = services.tmp / "up.port", services.tmp / "up.stderr"
    workdir = services.tmp / "cwd"
    workdir.mkdir()
    with stderr.open("wb") as err:
        up = subprocess.Popen(
            [*UP, "--config", str(services.config), "--port-file", str(port_file)],
            cwd=workdir,
            env={**os.environ, **SERVER_ENV, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        address = f"127.0.0.1:{wait_until(lambda: port_file.exists() and port_file.read_text())}"
        client = connect(address, ADMIN_A.token)
        assert set_mode(client, DISABLED, 0).revision == 1

        # storage.url from the config file is the database in use (no ./data beside it).
        assert not (workdir / "data").exists()
        assert services.sql("SELECT revision FROM thread_modes") == [(1,)]

        # A runtime killed under `up` is restarted on the same address.
        os.kill(_children(up.pid)["runtime"], signal.SIGKILL)
        wait_until(lambda: "restarting it" in stderr.read_text(), what="the restart notice")
        wait_until(lambda: "runtime is serving again" in stderr.read_text(), what="the restart")
        assert read(client, "t1", timeout=30).revision == 1  # the gateway reconnected
        assert up.poll() is None

        # SIGTERM: the gateway drains (its calls in flight still reach the runtime), then
        # the runtime stops.
        pool = ThreadPoolExecutor(2)
        with services.write_lock():
            calls = [pool.submit(set_mode, client, DISABLED, 0, f"d{i}", "", 30) for i in range(2)]
            wait_until(lambda: stderr.read_text().count(RUNTIME_SET_STARTED) >= 3, what="calls")
            up.send_signal(signal.SIGTERM)
            wait_until(lambda: GATEWAY_DRAINING in stderr.read_text(), what="gateway draining")
        assert [c.result().revision for c in calls] == [1, 1]
        pool.shutdown()
        assert up.wait(timeout=60) == 0
        events = [
            (e.get("service"), e.get("msg"))
            for e in _log_lines(stderr)
            if e.get("logger") == "agentmem.serving"
        ]
        assert events.index(("gateway", "stopped")) < events.index(("runtime", "draining"))
        client.close()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        for pid in _children(up.pid).values():
            os.kill(pid, signal.SIGKILL)
