"""`agentmem watch` across a gateway restart: it resumes after the last sequence it printed,
with no gap and no duplicate, instead of exiting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from protocol_svc import app as gateway_app
from tests.faults.conftest import wait_until
from tests.harness import ADMIN_A, ROOT
from tests.test_thread_mode import DISABLED, set_mode

WATCH = [sys.executable, "-m", "agentmem.cli.main", "watch", "--json", "--limit", "6"]


def test_cli_watch_resumes_after_a_gateway_restart(stack, tmp_path):
    client = stack.client()
    for i in range(3):
        set_mode(client, DISABLED, 0, thread_id=f"before{i}")
    out, err = tmp_path / "watch.out", tmp_path / "watch.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        watch = subprocess.Popen(
            [*WATCH, "--addr", stack.address],
            cwd=ROOT,
            env={**os.environ, "AGENTMEM_TOKEN": ADMIN_A.token},
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
    try:
        wait_until(lambda: len(out.read_text().splitlines()) == 3, what="the first events")
        port = stack.gateway.port
        stack.loop.run(stack.gateway.stop())  # ends the watch with UNAVAILABLE
        stack.gateway = stack.loop.run(
            gateway_app.start(
                stack.settings, listen=f"127.0.0.1:{port}", runtime_address=stack.runtime_address
            )
        )
        client = stack.client()
        for i in range(3):
            set_mode(client, DISABLED, 0, thread_id=f"after{i}")
        assert watch.wait(timeout=60) == 0, err.read_text()
    finally:
        if watch.poll() is None:
            watch.kill()
    sequences = [json.loads(line)["sequence"] for line in out.read_text().splitlines()]
    assert sequences == [1, 2, 3, 4, 5, 6]
    assert "resuming after 3" in err.read_text()
