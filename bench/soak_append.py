"""The append-heavy soak: agents append a turn to a conversation after each exchange.

Clients are spread over the tenants; one in four searches (a search or a prompt's memory
block, as an agent asks before answering), the others append. An appender appends each turn
to one of its tenant's shared conversations (several appenders on each, so they race) or
to its own, with compare-and-swap on `expected_revision`: on REVISION_MISMATCH it reads the
conversation's revision again and retries, as an agent would. Every turn has a word of its
own (`soak_texts`); a sample of the acknowledged turns is searched for by that word at once
(`--word-check-every`), and a few are probes of meaning (`soak_meaning`). A conversation
that reached `SESSION_TURNS` is followed by a new one (a new session), so that no
conversation reaches the service's size limits however long the soak runs.

Afterwards every conversation is read back and `soak_checks.check_turns` checks that every
acknowledged turn is stored exactly once, where its revision says.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agentmem import ApiError, Client, RevisionMismatch
from bench.soak_checks import Ack, Outcomes, error_code
from bench.soak_meaning import Prober
from bench.soak_texts import FILLER, everyday, probe_turn, turn_ids, turn_word

SHARED_PER_TENANT = 2
SESSION_TURNS = 300
MAX_ATTEMPTS = 200  # compare-and-swap attempts of one turn before the agent gives it up
PROBE_EVERY = 4  # an appender asks for a probe for one turn in this many
# Statuses after which the client cannot know whether the append took effect.
IN_DOUBT = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "UNKNOWN", "ABORTED", "CANCELLED"}


@dataclass(frozen=True)
class Habits:
    """How the agents behave: one acknowledged turn in `word_check_every` is searched for
    by its word at once (0: none), and an agent thinks `think_s` seconds on average between
    its turns (0: it appends again at once), as a model's answer takes a while."""

    word_check_every: int = 10
    think_s: float = 0.0


@dataclass
class AppendRecord(Outcomes):
    acked: dict[str, Ack] = field(default_factory=dict)
    in_doubt: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)  # seconds, acknowledged appends
    mismatches: int = 0
    given_up: int = 0
    word_checks: int = 0
    word_misses: list[str] = field(default_factory=list)
    conversations: set[str] = field(default_factory=set)
    crashes: list[str] = field(default_factory=list)


class Shared:
    """Each tenant's shared conversations; a full one is followed by a new one, made once
    by whichever appender found it full."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: dict[tuple[int, int], str] = {}

    def get(self, tenant: int, slot: int) -> str | None:
        with self._lock:
            return self._current.get((tenant, slot))

    def set(self, tenant: int, slot: int, source_id: str) -> None:
        with self._lock:
            self._current[(tenant, slot)] = source_id

    def follow(self, tenant: int, slot: int, full: str, start: Callable[[], str]) -> str:
        """The conversation after `full` (made by `start()` if nobody made it yet)."""
        with self._lock:
            current = self._current[(tenant, slot)]
            if current == full:
                current = self._current[(tenant, slot)] = start()
            return current


_turns = itertools.count()


def start_conversation(client: Client, rec: AppendRecord, thread_id: str) -> str:
    """A new conversation, its first turn acknowledged at revision 1."""
    word = turn_word(next(_turns))
    r = client.insert_memory(
        messages=everyday(word, random.Random(word)), thread_id=thread_id, request_id=word
    )
    with rec.lock:
        rec.acked[word] = Ack(r.source_id, r.revision)
        rec.conversations.add(r.source_id)
    return r.source_id


class Appender:
    """One agent appending its turns (a thread)."""

    def __init__(
        self,
        address: str,
        token: str,
        tenant: int,
        worker: int,
        rec: AppendRecord,
        shared: Shared,
        prober: Prober | None,
        habits: Habits,
    ) -> None:
        self.client = Client(address, token)
        self.tenant, self.worker, self.rec, self.shared = tenant, worker, rec, shared
        self.prober, self.habits = prober, habits
        self.rng = random.Random(worker)
        self.known: dict[str, int] = {}  # conversation -> the revision this agent last saw
        self.own = ""
        self.acks = 0

    def run(self, stop: threading.Event) -> None:
        try:
            self.own = start_conversation(self.client, self.rec, f"agent-{self.worker}")
            self.known[self.own] = 1
            while not stop.is_set():
                with contextlib.suppress(ApiError):  # recorded where raised; the agent goes on
                    self.turn()
                if self.habits.think_s:
                    stop.wait(self.rng.uniform(0.5, 1.5) * self.habits.think_s)
        except Exception as e:
            with self.rec.lock:
                self.rec.crashes.append(f"appender {self.worker}: {e!r}")
        finally:
            self.client.close()

    def _target(self) -> tuple[str, int | None]:
        """This turn's conversation, and its shared slot (None: the agent's own)."""
        if self.rng.random() < 0.5:
            return self.own, None
        slot = self.rng.randrange(SHARED_PER_TENANT)
        source_id = self.shared.get(self.tenant, slot)
        return (source_id, slot) if source_id else (self.own, None)

    def turn(self) -> None:
        source_id, slot = self._target()
        word = turn_word(next(_turns))
        probe = None
        if self.prober is not None and self.rng.randrange(PROBE_EVERY) == 0:
            probe = self.prober.take(self.tenant)
        messages = probe_turn(word, probe) if probe else everyday(word, self.rng)
        result = self._append(source_id, word, messages)
        if probe is not None and self.prober is not None:
            if result is None:
                self.prober.give_back(self.tenant)
            else:  # the user's message, two before the end (its reply's passage holds it)
                self.prober.track(self.tenant, probe, source_id, result[1] - 2)
        if result is None:
            return
        revision = result[0]
        self.acks += 1
        every = self.habits.word_check_every
        if every and self.acks % every == 0:
            self._word_check(word, source_id)
        if revision >= SESSION_TURNS:
            self._next_session(source_id, slot)

    def _append(
        self, source_id: str, word: str, messages: list[dict[str, str]]
    ) -> tuple[int, int] | None:
        """Appends the turn with compare-and-swap, reading again after each mismatch; its
        revision and the conversation's message count once acknowledged, else None."""
        for attempt in range(MAX_ATTEMPTS):
            expected = self.known.get(source_id)
            if expected is None:
                expected = self.known[source_id] = self._read(source_id)
            started = time.perf_counter()
            try:
                r = self.client.append_messages(
                    source_id=source_id,
                    expected_revision=expected,
                    messages=messages,
                    request_id=f"{word}-{attempt}",
                )
            except RevisionMismatch:
                self.rec.status("append", "FAILED_PRECONDITION/REVISION_MISMATCH")
                with self.rec.lock:
                    self.rec.mismatches += 1
                self.known.pop(source_id, None)  # read it again
                continue
            except ApiError as e:
                self.rec.status("append", error_code(e))
                if e.code().name in IN_DOUBT:
                    with self.rec.lock:
                        self.rec.in_doubt[word] = source_id
                self.known.pop(source_id, None)
                return None
            took = time.perf_counter() - started
            self.rec.status("append", "OK")
            self.known[source_id] = r.revision
            with self.rec.lock:
                self.rec.acked[word] = Ack(source_id, r.revision)
                self.rec.latencies.append(took)
            return r.revision, r.message_count
        with self.rec.lock:
            self.rec.given_up += 1
        return None

    def _read(self, source_id: str) -> int:
        try:
            revision = self.client.get_source(source_id=source_id).revision
        except ApiError as e:
            self.rec.status("read", error_code(e))
            raise
        self.rec.status("read", "OK")
        return revision

    def _word_check(self, word: str, source_id: str) -> None:
        """A search for the turn's own word, right after its acknowledgement, finds it."""
        found: set[str] = set()
        try:
            found = {h.source_id for h in self.client.search_memories(query=word, limit=10).hits}
            self.rec.status("search", "OK")
        except ApiError as e:
            self.rec.status("search", error_code(e))
        with self.rec.lock:
            self.rec.word_checks += 1
            if source_id not in found:
                self.rec.word_misses.append(f"{word} in {source_id}")

    def _next_session(self, full: str, slot: int | None) -> None:
        def start() -> str:
            return start_conversation(self.client, self.rec, f"shared-{slot}")

        if slot is None:
            self.own = start_conversation(self.client, self.rec, f"agent-{self.worker}")
            self.known[self.own] = 1
        else:
            self.known[self.shared.follow(self.tenant, slot, full, start)] = 1


def searcher(
    address: str, token: str, worker: int, rec: AppendRecord, stop: threading.Event
) -> None:
    """An agent asking for memories before it answers: searches and prompt blocks."""
    rng = random.Random(10_000 + worker)
    with Client(address, token) as client:
        while not stop.is_set():
            query = " ".join(rng.sample(FILLER, 2))
            op = rng.choice(("search", "assemble"))
            try:
                if op == "search":
                    client.search_memories(query=query, limit=10)
                else:
                    client.assemble_prompt(query=query, token_budget=400)
                rec.status(op, "OK")
            except ApiError as e:
                rec.status(op, error_code(e))


def stored_turns(address: str, tokens: list[str], conversations: set[str]) -> dict[str, list[str]]:
    """Every conversation's turn ids as stored, in order (read with each tenant's
    credential until one can read it)."""
    out: dict[str, list[str]] = {}
    clients = [Client(address, t) for t in tokens]
    try:
        for source_id in sorted(conversations):
            for c in clients:
                try:
                    source = c.get_source(source_id=source_id, include_content=True)
                except ApiError:
                    continue
                out[source_id] = turn_ids([m.content for m in source.messages])
                break
    finally:
        for c in clients:
            c.close()
    return out


def run_load(
    address: str,
    tokens: list[str],
    clients: int,
    seconds: float,
    prober: Prober | None,
    habits: Habits,
) -> tuple[AppendRecord, float]:
    """The load for `seconds`; what it recorded, and how long it ran."""
    rec = AppendRecord()
    shared = Shared()
    for tenant, token in enumerate(tokens):
        with Client(address, token) as c:
            for slot in range(SHARED_PER_TENANT):
                shared.set(tenant, slot, start_conversation(c, rec, f"shared-{slot}"))
    stop = threading.Event()
    searchers = max(clients // 4, 1)
    threads = []
    for i in range(clients):
        tenant = i % len(tokens)
        if i < searchers:
            thread = threading.Thread(target=searcher, args=(address, tokens[tenant], i, rec, stop))
        else:
            agent = Appender(address, tokens[tenant], tenant, i, rec, shared, prober, habits)
            thread = threading.Thread(target=agent.run, args=(stop,))
        threads.append(thread)
    if prober is not None:
        prober.start()
    started = time.monotonic()
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    return rec, time.monotonic() - started
