"""A server's `--port-file` is written whole and renamed into place: whoever waits for it
(a supervisor, a test harness) never reads it empty or half written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import ROOT, SERVER_ENV, wait_until

# Nothing listens here: neither server calls its gateway before a request comes.
NO_GATEWAY = "127.0.0.1:9"


@pytest.mark.parametrize(
    "command",
    [
        ["console", "--listen", "127.0.0.1:0", "--addr", NO_GATEWAY],
        ["app-server", "--listen", "ws://127.0.0.1:0", "--addr", NO_GATEWAY],
    ],
    ids=["console", "app-server"],
)
def test_a_port_file_is_replaced_never_rewritten_in_place(command, tmp_path: Path) -> None:
    port_file = tmp_path / "server.port"
    port_file.write_text("stale")
    # A second name for the file as it was: a write in place (truncate, then write) shows
    # through it, as an empty file does to a reader at the wrong moment; a rename does not.
    earlier = tmp_path / "earlier.port"
    os.link(port_file, earlier)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmem.cli.main", *command, "--port-file", str(port_file)],
        env={**os.environ, **SERVER_ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:

        def announced() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "exited")
            return port_file.read_text() != "stale"

        wait_until(announced, 60, "the port file")
        assert port_file.read_text().isdigit()
        assert earlier.read_text() == "stale"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
