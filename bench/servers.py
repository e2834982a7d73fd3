"""Start the services (and the echo floor) as processes for the benchmarks."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start(
    args: list[str], port_file: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [*args, "--port-file", str(port_file)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{args} did not start")
        time.sleep(0.02)
    return proc, int(port_file.read_text())


def key(token: str, tenant: str, scopes: list[str]) -> dict:
    return {
        "principal": f"bench-{tenant}",
        "tenant": tenant,
        "kind": "user",
        "scopes": scopes,
        "sha256": hashlib.sha256(token.encode()).hexdigest(),
    }


ALL_SCOPES = [
    "memory.read",
    "memory.write",
    "memory.content.read",
    "memory.policy",
    "memory.review",
    "memory.admit",
    "memory.admin",
]


@contextmanager
def agentmem(
    tmp: Path,
    keys: list[dict],
    data_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
):
    """Runtime and gateway as two processes; yields the gateway address."""
    env = {"AGENTMEM_INTERNAL__TOKEN": "bench-internal", **(extra_env or {})}
    tag = str(time.monotonic_ns())
    config = tmp / f"config-{tag}.yaml"
    config.write_text(json.dumps({"auth": {"api_keys": keys}}))  # JSON is YAML
    cli = [sys.executable, "-m", "agentmem.cli.main"]
    procs = []
    try:
        runtime, rport = start(
            [
                *cli,
                "runtime",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                str(data_dir or tmp / "data"),
            ],
            tmp / f"r{tag}",
            env,
        )
        procs.append(runtime)
        gateway, gport = start(
            [
                *cli,
                "gateway",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                "--runtime",
                f"127.0.0.1:{rport}",
            ],
            tmp / f"g{tag}",
            env,
        )
        procs.append(gateway)
        yield f"127.0.0.1:{gport}"
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=60)


@contextmanager
def echo_floor(tmp: Path):
    """A bare two-hop gRPC echo, as processes; yields its front address."""
    py = sys.executable
    procs = []
    try:
        back, bport = start([py, "bench/echo.py", "back"], tmp / "echo-b")
        procs.append(back)
        front, fport = start(
            [py, "bench/echo.py", "front", "--backend", f"127.0.0.1:{bport}"], tmp / "echo-f"
        )
        procs.append(front)
        yield f"127.0.0.1:{fport}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
