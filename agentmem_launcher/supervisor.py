"""How `agentmem up` keeps its two services running and stops them in order.

A service that dies is restarted on the same address after a backoff (0.5 s doubling to
8 s), and `up` says so on stderr; the gateway reconnects to a restarted runtime by itself,
and watches resume. A service that dies `MAX_RESTARTS` times within `WINDOW_S` stops both
and `up` exits 1, so an outer supervisor (systemd, Kubernetes) sees the failure.

SIGTERM/SIGINT stop the gateway first (it stops taking calls and drains those in flight,
which still need the runtime), then the runtime; `up` exits 0.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

MAX_RESTARTS = 5
WINDOW_S = 60.0
BACKOFF_S = (0.5, 8.0)
STOP_TIMEOUT_S = 60.0
_POLL_S = 0.2


# The runtime loads the embedding model before it serves (retrieval by meaning is on by
# default): seconds on an idle machine, a minute or more on a busy one.
START_TIMEOUT_S = 300.0


class StartFailed(Exception):
    """A service ended, or did not serve in time, while starting; `code` is its exit code
    (None when it did not exit)."""

    def __init__(self, name: str, code: int | None) -> None:
        self.name, self.code = name, code
        if code is None:
            what = f"did not start within {START_TIMEOUT_S:.0f} s"
        else:
            what = f"exited with code {code}"
        super().__init__(f"the {name} {what} during start-up")


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    port_file: Path
    listen: str
    proc: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)

    def start(self) -> int:
        """Starts the service and waits until it serves; its port from then on is fixed,
        so that a restart comes back on the same address."""
        self.port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [*self.argv, "--listen", self.listen, "--port-file", str(self.port_file)],
            env=self.env,
        )
        port = _wait_for_port(self.port_file, self.proc, self.name)
        self.listen = f"{self.listen.rsplit(':', 1)[0]}:{port}"
        return port

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = STOP_TIMEOUT_S) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _wait_for_port(
    path: Path, proc: subprocess.Popen[bytes], name: str, timeout: float = START_TIMEOUT_S
) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        written = path.read_text().strip() if path.exists() else ""
        if written.isdigit():  # a file being written may be empty for a moment
            return int(written)
        if proc.poll() is not None:
            raise StartFailed(name, proc.returncode)
        time.sleep(0.05)  # polling the port file a child writes; nothing to wait on
    raise StartFailed(name, None)


def stop_all(children: list[Child]) -> None:
    """The gateway first, then the runtime, each drained before the next is asked."""
    for child in reversed(children):
        child.terminate()
        child.wait()


def supervise(children: list[Child]) -> int:
    stopping = False

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stopping:
        for child in children:
            if stopping or child.alive():
                continue
            code = child.proc.returncode if child.proc is not None else None
            now = time.monotonic()
            child.restarts = [t for t in child.restarts if now - t < WINDOW_S] + [now]
            if len(child.restarts) > MAX_RESTARTS:
                print(
                    f"agentmem: the {child.name} exited with code {code} "
                    f"{len(child.restarts)} times within {WINDOW_S:.0f} s; stopping",
                    file=sys.stderr,
                    flush=True,
                )
                stop_all(children)
                return 1
            delay = min(BACKOFF_S[0] * 2 ** (len(child.restarts) - 1), BACKOFF_S[1])
            print(
                f"agentmem: the {child.name} exited with code {code}; "
                f"restarting it in {delay:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            _sleep_unless(lambda: stopping, delay)
            if not stopping:
                try:
                    child.start()
                except StartFailed as e:
                    print(f"agentmem: {e} (restart)", file=sys.stderr, flush=True)
                else:
                    print(f"agentmem: the {child.name} is serving again", file=sys.stderr)
        if not stopping:
            time.sleep(_POLL_S)  # polling child processes; nothing to wait on in common
    stop_all(children)
    return 0


def _sleep_unless(stop: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not stop() and time.monotonic() < deadline:
        time.sleep(min(_POLL_S, max(deadline - time.monotonic(), 0)))
