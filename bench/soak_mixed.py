"""The mixed soak: plain inserts (with request ids), searches, classification flips and
thread-mode changes (compare-and-swap on a few shared keys, so clients race), and watchers,
in one tenant.

Checks: every acknowledged insert is readable; the compare-and-swap history of every key is
linearizable (`soak_checks.check_linearizable`); every watcher saw a gapless,
duplicate-free run of sequences (resuming when cut off); the tenant's audit chain verifies.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from agentmem import ApiError, Client, RevisionMismatch
from agentmem.client import NO_RETRY
from agentmem.v1 import events_pb2
from bench.soak_checks import CasOp, Outcomes, check_linearizable, error_code
from bench.soak_meaning import Prober
from bench.soak_texts import FILLER, turn_word

SHARED_THREADS = 4
SHARED_SOURCES = 4
PROBE_EVERY = 4  # an insert asks for a probe in this many
MODES = ("enabled", "disabled")
CLASSES = ("active", "cold")


@dataclass
class MixedRecord(Outcomes):
    acked: dict[str, str] = field(default_factory=dict)  # source id -> request id
    latencies: list[float] = field(default_factory=list)  # seconds, acknowledged inserts
    cas: list[CasOp] = field(default_factory=list)
    watch_runs: list[list[int]] = field(default_factory=list)
    watch_cuts: Counter[str] = field(default_factory=Counter)
    shared_sources: list[str] = field(default_factory=list)


def _cas(rec: MixedRecord, key: str, expected: int, call: Callable[[int], int]) -> None:
    """One compare-and-swap, recorded with its real-time interval and outcome."""
    start = time.monotonic()
    try:
        revision, outcome = call(expected), "ok"
        rec.status("cas", "OK")
    except RevisionMismatch as e:
        rec.status("cas", error_code(e))
        outcome, revision = "mismatch", e.current_revision or -1
    except ApiError as e:
        rec.status("cas", error_code(e))
        outcome, revision = "unknown", -1
    with rec.lock:
        rec.cas.append(CasOp(key, start, time.monotonic(), expected, outcome, revision))


class Worker:
    def __init__(
        self, address: str, token: str, rec: MixedRecord, worker: int, prober: Prober | None
    ) -> None:
        self.client = Client(address, token, retry=NO_RETRY)
        self.rec, self.worker, self.prober = rec, worker, prober
        self.rng = random.Random(worker)
        self.known: dict[str, int] = {}  # key -> the revision this client last saw

    def run(self, stop: threading.Event) -> None:
        with self.client:
            n = 0
            while not stop.is_set():
                n += 1
                op = self.rng.choices(["insert", "search", "flip", "mode"], weights=[4, 4, 2, 2])[0]
                try:
                    if op == "insert":
                        self.insert(f"c{self.worker}-{n}")
                    elif op == "search":
                        self.client.search_memories(query=self.rng.choice(FILLER))
                        self.rec.status(op, "OK")
                    elif op == "flip":
                        source_id = self.rec.shared_sources[self.rng.randrange(SHARED_SOURCES)]
                        _cas(
                            self.rec, source_id, self.known.get(source_id, 1), self._flip(source_id)
                        )
                    else:
                        thread_id = f"shared-{self.rng.randrange(SHARED_THREADS)}"
                        _cas(
                            self.rec, thread_id, self.known.get(thread_id, 0), self._mode(thread_id)
                        )
                except ApiError as e:
                    self.rec.status(op, error_code(e))

    def insert(self, request_id: str) -> None:
        probe = None
        if self.prober is not None and self.rng.randrange(PROBE_EVERY) == 0:
            probe = self.prober.take(0)
        word = turn_word(self.worker * 10_000_000 + int(request_id.rsplit("-", 1)[1]))
        a, b = self.rng.sample(FILLER, 2)
        text = f"{word} {probe.memory}" if probe else f"{word} about the {a} and the {b}"
        started = time.perf_counter()
        try:
            r = self.client.insert_memory(content=text, request_id=request_id)
        except ApiError:
            if probe is not None and self.prober is not None:
                self.prober.give_back(0)
            raise
        took = time.perf_counter() - started
        if probe is not None and self.prober is not None:
            self.prober.track(0, probe, r.source_id, None)
        with self.rec.lock:
            self.rec.acked[r.source_id] = request_id
            self.rec.latencies.append(took)
        self.rec.status("insert", "OK")

    def _flip(self, source_id: str) -> Callable[[int], int]:
        def call(expected: int) -> int:
            try:
                r = self.client.set_source_classification(
                    source_id=source_id,
                    expected_revision=expected,
                    classification=self.rng.choice(CLASSES),
                    timeout=10,
                )
            except RevisionMismatch as e:
                self.known[source_id] = e.current_revision or expected
                raise
            self.known[source_id] = r.revision
            return r.revision

        return call

    def _mode(self, thread_id: str) -> Callable[[int], int]:
        def call(expected: int) -> int:
            try:
                r = self.client.set_thread_memory_mode(
                    thread_id=thread_id,
                    expected_revision=expected,
                    mode=self.rng.choice(MODES),
                    timeout=10,
                )
            except RevisionMismatch as e:
                self.known[thread_id] = e.current_revision or expected
                raise
            self.known[thread_id] = r.revision
            return r.revision

        return call


def _cancel_on_stop(
    cancel: Callable[[], object], stop: threading.Event, ended: threading.Event
) -> None:
    """Cancels the stream once the soak stops (a stream that ended first is left)."""
    while not (stop.wait(0.2) or ended.is_set()):
        pass
    if not ended.is_set():
        cancel()


def watcher(address: str, token: str, rec: MixedRecord, stop: threading.Event) -> None:
    """Follows the event stream, resuming after the last sequence it saw when cut off."""
    seen: list[int] = []
    with Client(address, token, retry=NO_RETRY) as client:
        while not stop.is_set():
            after = seen[-1] if seen else 0
            stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=after))
            ended = threading.Event()
            stopper = threading.Thread(target=_cancel_on_stop, args=(stream.cancel, stop, ended))
            stopper.start()
            try:
                for item in stream:
                    seen.append(item.event.sequence)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.CANCELLED:
                    with rec.lock:
                        rec.watch_cuts[e.code().name] += 1
            ended.set()
            stopper.join()
    with rec.lock:
        rec.watch_runs.append(seen)


def run_load(
    address: str, token: str, clients: int, seconds: float, prober: Prober | None
) -> tuple[MixedRecord, float]:
    rec = MixedRecord()
    with Client(address, token, retry=NO_RETRY) as client:
        rec.shared_sources[:] = [
            client.insert_memory(content=f"shared source {i} about the {FILLER[i]}").source_id
            for i in range(SHARED_SOURCES)
        ]
    stop = threading.Event()
    watchers = max(clients // 8, 1)
    threads = [
        threading.Thread(target=Worker(address, token, rec, i, prober).run, args=(stop,))
        for i in range(clients - watchers)
    ] + [
        threading.Thread(target=watcher, args=(address, token, rec, stop)) for _ in range(watchers)
    ]
    if prober is not None:
        prober.start()
    started = time.monotonic()
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    return rec, time.monotonic() - started


def check(address: str, token: str, rec: MixedRecord) -> list[str]:
    """Prints the mixed soak's own checks; their failures."""
    failures = []
    with Client(address, token, retry=NO_RETRY) as client:
        stored: set[str] = set()
        page_token = ""
        while True:
            page = client.list_sources(page_size=1000, page_token=page_token)
            stored |= {s.source_id for s in page.sources}
            page_token = page.next_page_token
            if not page_token:
                break
        verify = client.verify_audit_chain()
    lost = set(rec.acked) - stored
    print(
        f"  inserts: {len(rec.acked)} acknowledged, {len(set(rec.acked) & stored)} readable, "
        f"{len(lost)} lost"
    )
    if lost:
        failures.append(f"{len(lost)} acknowledged inserts not readable")
    problems = check_linearizable(rec.cas, {s: 1 for s in rec.shared_sources})
    outcomes = Counter(o.outcome for o in rec.cas)
    print(
        f"  compare-and-swap: {len(rec.cas)} calls on {len({o.key for o in rec.cas})} keys "
        f"({outcomes['ok']} ok, {outcomes['mismatch']} mismatch, {outcomes['unknown']} in "
        f"doubt): {'linearizable' if not problems else 'NOT linearizable'}"
    )
    for p in problems[:10]:
        print(f"    {p}")
    failures += problems[:1]
    gaps = sum(1 for r in rec.watch_runs if r != list(range(1, len(r) + 1)))
    events = max((len(r) for r in rec.watch_runs), default=0)
    print(
        f"  watchers: {len(rec.watch_runs)}, up to {events} events each, {gaps} with a gap or "
        f"duplicate; cut off: {dict(rec.watch_cuts) or 0}"
    )
    if gaps:
        failures.append("a watcher saw a gap or a duplicate")
    print(f"  audit chain: {'verified' if verify.ok else 'BROKEN'} ({verify.length} receipts)")
    if not verify.ok:
        failures.append("audit chain does not verify")
    return failures
