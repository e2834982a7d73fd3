"""When an acknowledged write is found by meaning, and when the embedding queue is empty.

Meaning lag. A few writes are probes (`soak_texts.Probe`): a memory from the paraphrase
sets, said in a turn or inserted. From its acknowledgement on, the prober asks the probe's
question (which shares no content word with the memory, nor with any other text the soak
writes) with `SearchMemories`, passages ungrouped, until a hit is the probe's own passage
(for a conversation, a passage whose messages include the one that says it). Words cannot
find that passage, so the time until it is found is the time until its meaning was
embedded and searchable: the meaning lag. A probe found within `TOO_SOON_S` of its
acknowledgement is counted apart (`too_soon`): sooner than the indexer starts (it waits for
the write path to be idle for 0.2 s), it would show the question finding the passage by
words, which the texts rule out. Each tenant has a few probes in flight at a time
(`IN_FLIGHT`), each looked at every `LOOK_S` (more often in its first seconds), so that
probing stays a small part of the load. The probes are calibrated first (`calibrate`).

Drain. After the load, every tenant's `GetCapabilities().retrieval.embeddings_pending` is
polled until it is 0 for all of them.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentmem import ApiError, Client
from agentmem.v1 import retrieval_pb2
from bench.soak_texts import PROBES, Probe, everyday, probe_pool, probe_turn, turn_word

IN_FLIGHT = 8  # probes per tenant waiting to be found at a time
# How often a probe is looked at: every 0.25 s in its first 3 s, every 1 s until 15 s, then
# every 2 s (a lag is known to that precision).
LOOKS = ((3.0, 0.25), (15.0, 1.0))
LOOK_S = 2.0
HITS = 20
TOO_SOON_S = 0.15
CALIBRATION_TURNS = 8  # everyday turns before each probe in calibration


def covers(hits: Iterable[retrieval_pb2.SearchHit], source_id: str, message: int | None) -> bool:
    """Whether one of the hits is the probe's: its source and, for a conversation
    (`message` given), a passage holding that message."""
    for h in hits:
        if h.source_id != source_id:
            continue
        if message is None or h.passage.message_start <= message <= h.passage.message_end:
            return True
    return False


@dataclass
class _Waiting:
    tenant: int
    probe: Probe
    source_id: str
    message: int | None
    acked_at: float
    next_look: float


@dataclass
class MeaningLags:
    lags: list[float] = field(default_factory=list)  # seconds, acknowledgement to found
    by_tenant: dict[int, list[float]] = field(default_factory=dict)
    too_soon: int = 0  # found sooner than the indexer could have embedded them
    missing: list[str] = field(default_factory=list)  # not found by the deadline
    errors: int = 0  # searches that failed


class Prober:
    """Hands out probes (`take`), follows each acknowledged one (`track`) until it is found
    by meaning, on a thread of its own with a client per tenant."""

    def __init__(
        self, address: str, tokens: Sequence[str], probes: list[Probe], seed: int = 0
    ) -> None:
        self._clients = [Client(address, t) for t in tokens]
        self._pools = [probe_pool(probes, seed + i) for i in range(len(tokens))]
        self._taken = [0] * len(tokens)
        self._waiting: list[_Waiting] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._stop = threading.Event()
        self.result = MeaningLags()
        self._thread = threading.Thread(target=self._run, name="soak-prober", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def take(self, tenant: int) -> Probe | None:
        """A probe for the next write in `tenant`, or None (enough in flight, none left)."""
        with self._lock:
            if self._closing.is_set() or self._taken[tenant] >= IN_FLIGHT:
                return None
            if not self._pools[tenant]:
                return None
            self._taken[tenant] += 1
            return self._pools[tenant].pop()

    def give_back(self, tenant: int) -> None:
        """The probe's write was not acknowledged: its place is free (the probe is not
        used again, it may be stored)."""
        with self._lock:
            self._taken[tenant] -= 1

    def track(self, tenant: int, probe: Probe, source_id: str, message: int | None) -> None:
        now = time.monotonic()
        with self._lock:
            self._waiting.append(_Waiting(tenant, probe, source_id, message, now, now))

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                due = [w for w in self._waiting if w.next_look <= now]
            for w in due:
                self._look(w)
            with self._lock:
                upcoming = [w.next_look for w in self._waiting]
            self._stop.wait(min(max(min(upcoming, default=now + 0.1) - now, 0.01), 0.1))

    def _look(self, w: _Waiting) -> None:
        try:
            hits = (
                self._clients[w.tenant]
                .SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(
                        query=w.probe.question, limit=HITS, group_by_source=False
                    )
                )
                .hits
            )
        except ApiError:
            self.result.errors += 1
            hits = []
        now = time.monotonic()
        if not covers(hits, w.source_id, w.message):
            age = now - w.acked_at
            w.next_look = now + next((every for until, every in LOOKS if age < until), LOOK_S)
            return
        lag = now - w.acked_at
        with self._lock:
            self._waiting.remove(w)
            self._taken[w.tenant] -= 1
            self.result.lags.append(lag)
            self.result.by_tenant.setdefault(w.tenant, []).append(lag)
            if lag < TOO_SOON_S:
                self.result.too_soon += 1

    def close(self) -> None:
        """No probe is handed out from now on (the load is over)."""
        self._closing.set()

    def finish(self, deadline: float) -> MeaningLags:
        """Follows the probes still waiting until each is found or `deadline` (a
        `time.monotonic()` value) passes; the lags."""
        self.close()
        while time.monotonic() < deadline:
            with self._lock:
                if not self._waiting:
                    break
            time.sleep(0.1)
        self._stop.set()
        self._thread.join(timeout=30)
        with self._lock:
            self.result.missing = [
                f"{w.probe.question!r} in {w.source_id} (message {w.message})"
                for w in self._waiting
            ]
        for c in self._clients:
            c.close()
        return self.result


def calibrate(address: str, token: str, bound: float = 120) -> list[Probe]:
    """The probes whose question finds their memory by meaning on this service, as the
    soak says them: each in a conversation of its own (`CALIBRATION_TURNS` everyday turns,
    then the probe's) in a tenant kept for this, embedded (the queue drained), then asked. A
    probe the model cannot answer from its passage would measure nothing: it is left out."""
    with Client(address, token) as c:
        said = []
        for i, probe in enumerate(PROBES):
            rng = random.Random(i)
            messages = [m for k in range(CALIBRATION_TURNS) for m in everyday(turn_word(k), rng)]
            said.append(
                (
                    probe,
                    c.insert_memory(messages=[*messages, *probe_turn(turn_word(i), probe)]),
                )
            )
        drained = wait_drained(address, [token], time.monotonic(), bound)
        if drained.seconds is None:
            raise SystemExit(f"soak: the probes' calibration did not drain in {bound:.0f} s")
        return [
            probe
            for probe, r in said
            if covers(
                c.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(
                        query=probe.question, limit=HITS, group_by_source=False
                    )
                ).hits,
                r.source_id,
                2 * CALIBRATION_TURNS,
            )
        ]


@dataclass(frozen=True)
class Drain:
    seconds: float | None  # after the load until no tenant had a source waiting; None: not
    pending: int  # waiting when it ended (0 when drained)
    set_aside: int
    last_errors: tuple[str, ...]  # the tenants' latest embedding failures (error types)


def wait_drained(address: str, tokens: Sequence[str], since: float, bound: float) -> Drain:
    """Polls every tenant's retrieval status until none has a source waiting to be embedded,
    or `bound` seconds after `since` (the load's end, `time.monotonic()`)."""
    clients = [Client(address, t) for t in tokens]
    try:
        while True:
            statuses = [c.get_capabilities().retrieval for c in clients]
            pending = sum(s.embeddings_pending for s in statuses)
            now = time.monotonic()
            if not pending or now - since > bound:
                return Drain(
                    None if pending else now - since,
                    pending,
                    sum(s.embeddings_set_aside for s in statuses),
                    tuple(s.embeddings_last_error for s in statuses if s.embeddings_last_error),
                )
            time.sleep(0.5)
    finally:
        for c in clients:
            c.close()
