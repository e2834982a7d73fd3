"""Load-and-check (`make soak`): N clients x T seconds of mixed load against the services as
real processes, then the checks.

Load: inserts (with request ids), searches, classification flips and thread-mode changes
(compare-and-swap on a few shared keys, so clients race), and watchers.
Checks, printed as a report (exit 1 when one fails):
- statuses by code; INTERNAL or UNKNOWN fail the run;
- acknowledged inserts vs readable sources (every acknowledged one must be readable);
- the compare-and-swap history of every key is linearizable (below);
- every watcher saw a gapless, duplicate-free run of sequences (resuming when cut off);
- the tenant's audit chain verifies.

Usage: python -m bench.soak --clients 32 --seconds 60 [--database-url URL]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import grpc
import yaml

from agentmem.client import connect
from agentmem.v1 import audit_pb2, common_pb2, events_pb2, sources_pb2, thread_mode_pb2
from tests.harness import (
    ADMIN_A,
    INTERNAL_TOKEN,
    KEYS,
    Process,
    database_url,
    drop_database,
    metadata_of,
    reason,
)
from tests.memory_helpers import insert, search_ids

WORDS = [
    "harbour",
    "lantern",
    "kite",
    "river",
    "orchard",
    "meadow",
    "beacon",
    "compass",
    "willow",
    "ember",
]
SHARED_THREADS = 4
SHARED_SOURCES = 4
MODES = (common_pb2.MEMORY_MODE_ENABLED, common_pb2.MEMORY_MODE_DISABLED)
CLASSES = (sources_pb2.CLASSIFICATION_ACTIVE, sources_pb2.CLASSIFICATION_COLD)


@dataclass(frozen=True)
class CasOp:
    """One compare-and-swap: its real-time interval, what it expected, and its outcome
    ("ok" with the new revision, "mismatch" with the revision the server reported, or
    "unknown" when the client cannot tell whether it took effect)."""

    key: str
    start: float
    end: float
    expected: int
    outcome: str
    revision: int


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.codes: Counter[str] = Counter()
        self.by_op: dict[str, Counter[str]] = defaultdict(Counter)
        self.acked: dict[str, str] = {}
        self.cas: list[CasOp] = []
        self.watch_runs: list[list[int]] = []
        self.watch_cuts: Counter[str] = Counter()

    def status(self, op: str, code: str) -> None:
        with self.lock:
            self.codes[code] += 1
            self.by_op[op][code] += 1


def _cas(rec: Recorder, key: str, expected: int, call) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    try:
        revision = call(expected).revision
        outcome = "ok"
        rec.status("cas", "OK")
    except grpc.RpcError as e:
        rec.status("cas", e.code().name)
        if reason(e) == "REVISION_MISMATCH":
            outcome, revision = "mismatch", int(metadata_of(e).get("current_revision", -1))
        else:
            outcome, revision = "unknown", -1
    with rec.lock:
        rec.cas.append(CasOp(key, start, time.monotonic(), expected, outcome, revision))


def client_loop(address: str, rec: Recorder, worker: int, stop: threading.Event) -> None:
    rng = random.Random(worker)
    known: dict[str, int] = {}  # key -> the revision this client last saw
    with connect(address, ADMIN_A.token) as client:
        n = 0
        while not stop.is_set():
            n += 1
            op = rng.choices(["insert", "search", "flip", "mode"], weights=[4, 4, 2, 2])[0]
            try:
                if op == "insert":
                    request_id = f"c{worker}-{n}"
                    text = f"note {request_id} about {rng.choice(WORDS)} and {rng.choice(WORDS)}"
                    r = insert(client, text, request_id=request_id)
                    with rec.lock:
                        rec.acked[r.source_id] = request_id
                    rec.status(op, "OK")
                elif op == "search":
                    search_ids(client, rng.choice(WORDS))
                    rec.status(op, "OK")
                elif op == "flip":
                    source_id = rec_shared_sources[rng.randrange(SHARED_SOURCES)]
                    _cas(
                        rec,
                        source_id,
                        known.get(source_id, 1),
                        lambda expected, s=source_id: _flip(client, s, expected, rng, known),
                    )
                else:
                    thread_id = f"shared-{rng.randrange(SHARED_THREADS)}"
                    _cas(
                        rec,
                        thread_id,
                        known.get(thread_id, 0),
                        lambda expected, t=thread_id: _mode(client, t, expected, rng, known),
                    )
            except grpc.RpcError as e:
                rec.status(op, e.code().name)


def _flip(client, source_id, expected, rng, known):  # type: ignore[no-untyped-def]
    try:
        r = client.SetSourceClassification(
            sources_pb2.SetSourceClassificationRequest(
                source_id=source_id, expected_revision=expected, classification=rng.choice(CLASSES)
            ),
            timeout=10,
        )
        known[source_id] = r.revision
        return r
    except grpc.RpcError as e:
        if reason(e) == "REVISION_MISMATCH":
            known[source_id] = int(metadata_of(e)["current_revision"])
        raise


def _mode(client, thread_id, expected, rng, known):  # type: ignore[no-untyped-def]
    try:
        r = client.SetThreadMemoryMode(
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id, expected_revision=expected, mode=rng.choice(MODES)
            ),
            timeout=10,
        )
        known[thread_id] = r.revision
        return r
    except grpc.RpcError as e:
        if reason(e) == "REVISION_MISMATCH":
            known[thread_id] = int(metadata_of(e)["current_revision"])
        raise


rec_shared_sources: list[str] = []


def watcher_loop(address: str, rec: Recorder, stop: threading.Event) -> None:
    seen: list[int] = []
    with connect(address, ADMIN_A.token) as client:
        while not stop.is_set():
            after = seen[-1] if seen else 0
            stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=after))
            stopper = threading.Thread(target=lambda s=stream: (stop.wait(), s.cancel()))
            stopper.start()
            try:
                for item in stream:
                    seen.append(item.event.sequence)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.CANCELLED:
                    with rec.lock:
                        rec.watch_cuts[e.code().name] += 1
            stopper.join()
    with rec.lock:
        rec.watch_runs.append(seen)


def check_linearizable(ops: list[CasOp], initial: dict[str, int]) -> list[str]:
    """A compare-and-swap register whose revision goes up by one on every success.

    Linearizable iff (1) the successes' revisions are distinct and, with the in-doubt
    calls that took effect, fill initial+1..final with no gap; (2) success revisions respect real
    time (one that ended before another began has the lower revision); (3) each success
    expected the revision just before its own; (4) a mismatch reported a revision that was
    current at some point during its call: at least the highest success that ended before
    it began, and at most the highest success that began before it ended plus the in-doubt
    calls."""
    problems = []
    by_key: dict[str, list[CasOp]] = defaultdict(list)
    for op in ops:
        by_key[op.key].append(op)
    for key, key_ops in by_key.items():
        oks = sorted((o for o in key_ops if o.outcome == "ok"), key=lambda o: o.revision)
        unknown = sum(1 for o in key_ops if o.outcome == "unknown")
        revisions = [o.revision for o in oks]
        if len(set(revisions)) != len(revisions):
            problems.append(f"{key}: a revision was granted twice")
        start = initial.get(key, 0)
        top = max(revisions, default=start)
        if top - start - len(revisions) > unknown:
            problems.append(f"{key}: revisions missing beyond the in-doubt calls")
        for o in oks:
            if o.expected != o.revision - 1:
                problems.append(f"{key}: success at {o.revision} expected {o.expected}")
        for a in oks:
            for b in oks:
                if a.end < b.start and a.revision > b.revision:
                    problems.append(f"{key}: revision {a.revision} before {b.revision}")
        for m in (o for o in key_ops if o.outcome == "mismatch"):
            floor = max((o.revision for o in oks if o.end < m.start), default=start)
            ceiling = max((o.revision for o in oks if o.start < m.end), default=start) + unknown
            if not floor <= m.revision <= ceiling:
                problems.append(
                    f"{key}: mismatch reported {m.revision} not in [{floor}, {ceiling}]"
                )
    return problems


def run(clients: int, seconds: float, url: str | None) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="agentmem-soak-"))
    url = url or database_url(tmp / "agentmem.db")
    config = tmp / "agentmem.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "auth": {"api_keys": [k.config() for k in KEYS]},
                "storage": {"url": url},
                "events": {"subscriber_queue": 4096},
            }
        )
    )
    env = {"AGENTMEM_INTERNAL__TOKEN": INTERNAL_TOKEN, "AGENTMEM_LOGGING__LEVEL": "WARNING"}
    runtime = Process(
        ["runtime", "--config", str(config), "--listen", "127.0.0.1:0"], env, tmp, "rt"
    )
    gateway = Process(
        [
            "gateway",
            "--config",
            str(config),
            "--listen",
            "127.0.0.1:0",
            "--runtime",
            runtime.address,
        ],
        env,
        tmp,
        "gw",
    )
    rec = Recorder()
    try:
        with connect(gateway.address, ADMIN_A.token) as client:
            rec_shared_sources[:] = [
                insert(client, f"shared source {i} about {WORDS[i]}").source_id
                for i in range(SHARED_SOURCES)
            ]
        stop = threading.Event()
        watchers = max(clients // 8, 1)
        threads = [
            threading.Thread(target=client_loop, args=(gateway.address, rec, i, stop))
            for i in range(clients - watchers)
        ] + [
            threading.Thread(target=watcher_loop, args=(gateway.address, rec, stop))
            for _ in range(watchers)
        ]
        started = time.monotonic()
        for t in threads:
            t.start()
        stop.wait(seconds)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        elapsed = time.monotonic() - started
        return report(gateway.address, rec, clients, watchers, elapsed, url)
    finally:
        gateway.stop()
        runtime.stop()
        drop_database(url)


def report(address, rec: Recorder, clients, watchers, elapsed, url) -> int:  # type: ignore[no-untyped-def]
    failures = []
    backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
    total = sum(rec.codes.values())
    print(f"soak: {clients} clients ({watchers} watchers) x {elapsed:.0f} s on {backend}")
    print(f"calls: {total} ({total / elapsed:.0f}/s)")
    print("statuses: " + ", ".join(f"{c} {n}" for c, n in rec.codes.most_common()))
    for op, codes in sorted(rec.by_op.items()):
        print(f"  {op:<7} " + ", ".join(f"{c} {n}" for c, n in codes.most_common()))
    if rec.codes["INTERNAL"] or rec.codes["UNKNOWN"]:
        failures.append("INTERNAL or UNKNOWN statuses")

    with connect(address, ADMIN_A.token) as client:
        stored, token = set(), ""
        while True:
            page = client.ListSources(
                sources_pb2.ListSourcesRequest(page_size=1000, page_token=token)
            )
            stored |= {s.source_id for s in page.sources}
            token = page.next_page_token
            if not token:
                break
        verify = client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest())
        last = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(page_size=1))
        del last
    lost = set(rec.acked) - stored
    readable = len(set(rec.acked) & stored)
    print(f"inserts: {len(rec.acked)} acknowledged, {readable} readable, {len(lost)} lost")
    if lost:
        failures.append(f"{len(lost)} acknowledged inserts not readable")

    problems = check_linearizable(rec.cas, {s: 1 for s in rec_shared_sources})
    keys = len({o.key for o in rec.cas})
    oks = sum(1 for o in rec.cas if o.outcome == "ok")
    mismatches = sum(1 for o in rec.cas if o.outcome == "mismatch")
    unknown = sum(1 for o in rec.cas if o.outcome == "unknown")
    print(
        f"compare-and-swap: {len(rec.cas)} calls on {keys} keys ({oks} ok, {mismatches} mismatch, "
        f"{unknown} in doubt): {'linearizable' if not problems else 'NOT linearizable'}"
    )
    for p in problems[:10]:
        print(f"  {p}")
    failures += problems[:1]

    gaps = 0
    for run_ in rec.watch_runs:
        if run_ != list(range(1, len(run_) + 1)):
            gaps += 1
    events = max((len(r) for r in rec.watch_runs), default=0)
    print(
        f"watchers: {len(rec.watch_runs)}, up to {events} events each, "
        f"{gaps} with a gap or duplicate; cut off: {dict(rec.watch_cuts) or 0}"
    )
    if gaps:
        failures.append("a watcher saw a gap or a duplicate")
    print(f"audit chain: {'verified' if verify.ok else 'BROKEN'} ({verify.length} receipts)")
    if not verify.ok:
        failures.append("audit chain does not verify")
    print("result: " + ("PASS" if not failures else "FAIL: " + "; ".join(failures)))
    return 0 if not failures else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("AGENTMEM_TEST_DATABASE_URL"),
        help="a PostgreSQL server URL (a fresh database is made on it); default SQLite",
    )
    args = parser.parse_args()
    url = None
    if args.database_url:
        os.environ["AGENTMEM_TEST_DATABASE_URL"] = args.database_url
        url = database_url(Path(tempfile.mkdtemp()) / "agentmem.db")
    return run(args.clients, args.seconds, url)


if __name__ == "__main__":
    sys.exit(main())
