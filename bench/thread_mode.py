"""Latency of ReadThreadMemoryMode / SetThreadMemoryMode through both services, next to a
bare two-hop gRPC echo measured the same way on the same machine in the same run.

Every server is its own process, as deployed; the client is this process, sequential
(one call at a time) and then with 16 calls in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentmem.client import connect  # noqa: E402
from agentmem.v1 import common_pb2, thread_mode_pb2  # noqa: E402

WARMUP, CALLS, IN_FLIGHT = 300, 3000, 16
TOKEN = "bench-token"


def start(args: list[str], port_file: Path, env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [*args, "--port-file", str(port_file)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{args} did not start")
        time.sleep(0.02)
    return proc, int(port_file.read_text())


def measure(call: Callable[[], object]) -> dict[str, float]:
    for _ in range(WARMUP):
        call()
    samples = []
    for _ in range(CALLS):
        t = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        t = time.perf_counter()
        list(pool.map(lambda _: call(), range(CALLS)))
        throughput = CALLS / (time.perf_counter() - t)
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[int(len(samples) * 0.99) - 1], 3),
        f"calls_per_s_{IN_FLIGHT}_in_flight": round(throughput),
    }


def main() -> None:
    procs: list[subprocess.Popen] = []
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        try:
            py = sys.executable
            back, bport = start([py, "bench/echo.py", "back"], t / "b", {})
            front, fport = start(
                [py, "bench/echo.py", "front", "--backend", f"127.0.0.1:{bport}"], t / "f", {}
            )
            procs += [back, front]
            with grpc.insecure_channel(f"127.0.0.1:{fport}") as ch:
                echo = ch.unary_unary("/bench.Echo/Echo", lambda b: b, lambda b: b)
                payload = b"x" * 32
                results["floor: two-hop echo"] = measure(lambda: echo(payload, timeout=10))

            keys = json.dumps(
                [
                    {
                        "principal": "bench",
                        "tenant": "bench",
                        "kind": "user",
                        "scopes": ["memory.read", "memory.policy"],
                        "sha256": hashlib.sha256(TOKEN.encode()).hexdigest(),
                    }
                ]
            )
            env = {"AGENTMEM_INTERNAL__TOKEN": "bench-internal", "AGENTMEM_AUTH__API_KEYS": keys}
            cli = [py, "-m", "agentmem.cli.main"]
            runtime, rport = start(
                [*cli, "runtime", "--listen", "127.0.0.1:0", "--data-dir", str(t / "data")],
                t / "r",
                env,
            )
            gateway, gport = start(
                [*cli, "gateway", "--listen", "127.0.0.1:0", "--runtime", f"127.0.0.1:{rport}"],
                t / "g",
                env,
            )
            procs += [runtime, gateway]
            with connect(f"127.0.0.1:{gport}", TOKEN) as client:
                client.SetThreadMemoryMode(
                    thread_mode_pb2.SetThreadMemoryModeRequest(
                        thread_id="t1", expected_revision=0, mode=common_pb2.MEMORY_MODE_DISABLED
                    )
                )
                req = thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1")
                results["ReadThreadMemoryMode"] = measure(
                    lambda: client.ReadThreadMemoryMode(req, timeout=10)
                )
                counter = iter(range(10**9))

                def set_new() -> None:
                    client.SetThreadMemoryMode(
                        thread_mode_pb2.SetThreadMemoryModeRequest(
                            thread_id=f"s{next(counter)}",
                            expected_revision=0,
                            mode=common_pb2.MEMORY_MODE_ENABLED,
                        ),
                        timeout=10,
                    )

                results["SetThreadMemoryMode (new thread each call)"] = measure(set_new)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(
        f"machine: {machine}; {CALLS} sequential calls after {WARMUP} warm-up, "
        f"then {CALLS} with {IN_FLIGHT} in flight"
    )
    print(f"{'what':<46} {'p50 ms':>8} {'p99 ms':>8} {'calls/s @16':>12}")
    for name, r in results.items():
        print(
            f"{name:<46} {r['p50_ms']:>8} {r['p99_ms']:>8} "
            f"{r[f'calls_per_s_{IN_FLIGHT}_in_flight']:>12}"
        )
    out = ROOT / "bench" / "results" / "thread_mode.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
