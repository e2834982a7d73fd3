"""What the benchmarks share: latency percentiles, timing a list of calls, the two-hop echo
floor, the retrieval calls timed on several stacks interleaved, copying a SQLite database,
and the echo floor a row is compared with."""

from __future__ import annotations

import contextlib
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from sqlalchemy.engine import make_url

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import servers


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    s = sorted(samples_ms)
    return {
        "p50_ms": round(statistics.median(s), 3),
        "p99_ms": round(s[max(int(len(s) * 0.99) - 1, 0)], 3),
        "max_ms": round(s[-1], 3),
        "n": len(s),
    }


def timed(calls: list[Callable[[], object]], warmup: int) -> dict[str, float]:
    for call in calls[:warmup]:
        call()
    samples = []
    for call in calls:
        t = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t) * 1000)
    return percentiles(samples)


def echo_floor(tmp: Path, n: int = 2000) -> dict[str, float]:
    with servers.echo_floor(tmp) as address, grpc.insecure_channel(address) as ch:
        echo = ch.unary_unary("/bench.Echo/Echo", lambda b: b, lambda b: b)
        return timed([lambda: echo(b"x" * 64, timeout=10)] * n, warmup=200)


RPCS: tuple[tuple[str, Callable[[object, str], object]], ...] = (
    (
        "SearchMemories",
        lambda c, q: c.SearchMemories(  # type: ignore[attr-defined]
            retrieval_pb2.SearchMemoriesRequest(query=q, limit=10), timeout=30
        ),
    ),
    (
        "AssemblePrompt",
        lambda c, q: c.AssemblePrompt(  # type: ignore[attr-defined]
            retrieval_pb2.AssemblePromptRequest(query=q, thread_id="bench", token_budget=400),
            timeout=30,
        ),
    ),
    (
        "ExplainRetrieval",
        lambda c, q: c.ExplainRetrieval(  # type: ignore[attr-defined]
            retrieval_pb2.ExplainRetrievalRequest(query=q, limit=10), timeout=30
        ),
    ),
)


def retrieval_rpcs(
    address: str,
    token_for: Callable[[int], str],
    questions: list[str],
) -> dict[str, dict]:
    return retrieval_rpcs_interleaved({"": address}, token_for, questions)[""]


def retrieval_rpcs_interleaved(
    addresses: dict[str, str],
    token_for: Callable[[int], str],
    questions: list[str],
    only: tuple[str, ...] = (),
) -> dict[str, dict[str, dict]]:
    """Each retrieval call's latency on each of several stacks (by label), the stacks' calls
    interleaved question by question (their order turning), so that a comparison between
    them is not one between two moments of a machine whose speed drifts. `only`: these
    calls alone (by name)."""
    clients: dict[tuple[str, str], object] = {}

    def client(label: str, i: int):  # type: ignore[no-untyped-def]
        token = token_for(i)
        if (label, token) not in clients:
            clients[label, token] = connect(addresses[label], token)
        return clients[label, token]

    labels = list(addresses)
    out: dict[str, dict[str, dict]] = {label: {} for label in labels}
    for name, make in RPCS:
        if only and name not in only:
            continue
        for label in labels:  # warm-up
            for i, q in enumerate(questions[:20]):
                make(client(label, i), q)
        samples: dict[str, list[float]] = {label: [] for label in labels}
        for i, q in enumerate(questions):
            for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                c = client(label, i)
                t = time.perf_counter()
                make(c, q)
                samples[label].append((time.perf_counter() - t) * 1000)
        for label in labels:
            out[label][name] = percentiles(samples[label])
    for c in clients.values():
        c.close()  # type: ignore[attr-defined]
    return out


def sqlite_copy(url: str, to: Path) -> str:
    """A copy of a SQLite database (through SQLite's backup, WAL included); its URL."""
    to.mkdir(parents=True, exist_ok=True)
    target = to / "agentmem.db"
    with (
        contextlib.closing(sqlite3.connect(make_url(url).database)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)
    return f"sqlite:///{target}"


def echo_here_lines(rows: list[dict]) -> list[str]:
    """The echo floors measured just before a corpus's calls (what its targets compare with)."""
    here = {r["scenario"]: r["echo_floor_here"] for r in rows if "echo_floor_here" in r}
    return [
        f"echo floor just before {name}: p50 {e['p50_ms']} ms, p99 {e['p99_ms']} ms, "
        f"max {e.get('max_ms', '-')} ms"
        for name, e in here.items()
    ]


def echo_here(report: dict, row: dict) -> float:
    """The echo floor's p50 measured just before a row's calls, else the run's first."""
    return row.get("echo_floor_here", report["echo_floor"])["p50_ms"]
