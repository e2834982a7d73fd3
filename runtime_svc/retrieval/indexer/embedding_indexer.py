"""The background indexer: embeds queued sources in small chunks, off the write path.

Inserts only queue the source (in their own transaction); this worker takes the oldest
queued sources, embeds the text of each of their search index entries (a whole-text memory
has one, a conversation one per passage: the message with its context window, as the
lexical side indexes it) outside any transaction (the model may take hundreds of
milliseconds), then stores the vectors in one write transaction per chunk. That
transaction takes no tenant's row lock (`UnitOfWork.derived_write`): on PostgreSQL,
inserts never wait for it. The sources taken are chunked in order of their texts' length,
so that each forward pass pads its texts to about their own length. A source purged in
between (revoked, erased) is no longer queued when the vectors are stored, and gets none.
Until its vector is stored, a source is ranked by its words alone.

The model and the writes share the machine's cores, so the indexer yields to writes: a
chunk starts only once the write path has been idle for `QUIET_S`. Held back for longer
than `MAX_HOLD_S` (writes that never pause), it takes at most `SHARE` of the time until the
queue is empty, so the backlog always drains (`agentmem_embedding_backlog` shows it).

It cannot wedge: a source has one place in the queue however often it is queued
(`storage.embedding_outbox`), and the queue is taken in turns across tenants. A chunk that
fails is tried again source by source; a source that fails alone is held back with its
failure recorded and, after a few, set aside, while the others go on. A failure of the
queue itself (the database) backs the whole indexer off, and no wake-up cuts that short.
Failures are counted by exception type (`agentmem_embedding_failures_total`) and the latest
is kept for `status` (GetCapabilities, `agentmem doctor`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from agentmem_kernel import metrics
from runtime_svc.retrieval.embedders.model import Embedder, Vector
from runtime_svc.retrieval.indexer import vector_store
from runtime_svc.storage import embedding_outbox
from runtime_svc.storage.db import Database
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.embeddings")
IDLE_WAIT_S = 5.0  # a wake-up comes with every commit that queued something; this is a backstop
MAX_BACKOFF_S = 30.0
CHUNK = 16  # texts per forward pass and per store: queries and writes wait at most one chunk
QUIET_S = 0.2  # how long the write path must have been idle before a chunk starts
MAX_HOLD_S = 30.0  # held back longer than this, the indexer takes its share anyway
SHARE = 0.25  # of the time, at most, while it takes its share during writes


def never_writing() -> float:
    return math.inf


@dataclass(frozen=True)
class Failure:
    """The indexer's latest failure: the exception's type name (never its message, which
    may quote text) and when (microseconds since the epoch)."""

    error: str
    at_us: int


class EmbeddingIndexer:
    def __init__(
        self,
        db: Database,
        uow: UnitOfWork,
        embedder: Embedder,
        clock: Callable[[], int],
        batch_size: int,
        writes_idle_for: Callable[[], float] = never_writing,
        max_hold_s: float = MAX_HOLD_S,
    ) -> None:
        """`clock`: now, in microseconds since the epoch (`services.clock`); `writes_idle_for`:
        seconds since the write path was last busy (0: busy now); `max_hold_s`: how long
        writes may hold it back before it takes its share."""
        self._db, self._uow, self._embedder, self._clock = db, uow, embedder, clock
        self._batch = batch_size
        self._writes_idle_for = writes_idle_for
        self._max_hold = max_hold_s
        self._held_since: float | None = None  # since when writes have kept it waiting
        self._next_share = 0.0  # when held back, the earliest start of the next chunk
        self.last_failure: Failure | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="embedding-indexer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        backoff = 0.0
        while not self._stop.is_set():
            self._wake.clear()  # a commit from here on wakes the wait below
            try:
                done = self.run_once()
                backoff = 0.0
            except Exception as e:  # the queue itself failed: every place stays queued
                backoff = min(MAX_BACKOFF_S, max(0.5, backoff * 2))
                self._failed(e)
                log.warning(
                    "the embedding queue could not be read or written; retrying",
                    extra={"error": type(e).__name__, "retry_in_s": backoff},
                )
                self._stop.wait(backoff)  # held whatever wakes it
                continue
            if not done:
                self._wake.wait(self._idle_wait())

    def _idle_wait(self) -> float:
        """Until the next wake-up, or the time a place held back by a failure is due."""
        with self._db.reader.connect() as conn:
            due = embedding_outbox.next_due_us(conn)
            conn.rollback()
        if due is None:
            return IDLE_WAIT_S
        return min(IDLE_WAIT_S, max(0.05, (due - self._clock()) / 1e6))

    def _failed(self, e: BaseException) -> None:
        self.last_failure = Failure(type(e).__name__, self._clock())
        metrics.EMBEDDING_FAILURES.labels(type(e).__name__).inc()

    def run_once(self) -> int:
        """Embeds and stores the queued sources due now (up to `batch_size`, in turns across
        tenants), chunk by chunk, each chunk once the write path lets it; returns how many
        sources it took off the queue or held back after a failure."""
        with self._db.reader.connect() as conn:
            items = vector_store.take(
                conn, self._batch, self._uow.window, self._embedder.model_id, self._clock()
            )
            conn.rollback()
        if not items:
            self._held_since = None
            return 0
        done = 0
        for chunk in _chunks(sorted(items, key=_longest)):
            if not self._wait_for_quiet():
                break  # stopping; the rest stays queued
            started = time.monotonic()
            self._embed_chunk(chunk)
            done += len(chunk)
            if self._held_since is not None:  # taking its share: rest 1/SHARE - 1 times as long
                ended = time.monotonic()
                self._next_share = ended + (ended - started) * (1 / SHARE - 1)
        return done

    def _embed_chunk(self, chunk: list[vector_store.Queued]) -> None:
        """Embeds and stores a chunk; if that fails, each source alone, so that one source
        that fails is held back (`_set_back`) and the others are stored."""
        try:
            self._embed_and_store(chunk)
            return
        except Exception as e:
            if len(chunk) == 1:
                self._set_back(chunk[0], e)
                return
            self._failed(e)
        for item in chunk:
            try:
                self._embed_and_store([item])
            except Exception as e:
                self._set_back(item, e)

    def _set_back(self, item: vector_store.Queued, e: BaseException) -> None:
        """Records the source's failure on its place and holds it back (set aside after a
        few); a failure to record it is the queue's own (`_run` backs off)."""
        self._failed(e)
        with self._uow.derived_write() as conn:
            attempts = embedding_outbox.failed(conn, item.place, type(e).__name__, self._clock())
        log.log(
            logging.ERROR if attempts >= embedding_outbox.SET_ASIDE_AFTER else logging.WARNING,
            "embedding a source failed; "
            + (
                "set aside"
                if attempts >= embedding_outbox.SET_ASIDE_AFTER
                else "it will be tried again"
            ),
            extra={
                "error": type(e).__name__,
                "source_id": item.source_id,
                "attempts": attempts,
            },
        )

    def _wait_for_quiet(self) -> bool:
        """Until a chunk may start: the write path idle for QUIET_S, or (held back longer
        than `max_hold_s`) its share's turn. False when the indexer is stopping."""
        while not self._stop.is_set():
            idle = self._writes_idle_for()
            if idle >= QUIET_S:
                self._held_since = None
                return True
            now = time.monotonic()
            if self._held_since is None:
                self._held_since = now
            wait = QUIET_S - idle
            if now - self._held_since >= self._max_hold:
                if now >= self._next_share:
                    return True
                wait = min(wait, self._next_share - now)
            else:
                wait = min(wait, self._held_since + self._max_hold - now)
            self._stop.wait(wait)
        return False

    def _embed_and_store(self, items: list[vector_store.Queued]) -> None:
        texts = [t for i in items for t in i.texts]
        embedded = self._embedder.embed(texts) if texts else []
        at = 0
        by_tenant: dict[str, list[tuple[vector_store.Queued, list[Vector]]]] = defaultdict(list)
        for item in items:
            n = len(item.entries)
            by_tenant[item.tenant_id].append((item, embedded[at : at + n]))
            at += n
        now = self._clock()
        # A transaction per tenant, holding no tenant's writes back: one holding a tenant's
        # store turn while it waits for another's could wait on a purge waiting for it.
        for tenant_id in sorted(by_tenant):
            with self._uow.derived_write() as conn:
                vector_store.store_many(conn, by_tenant[tenant_id], self._embedder.model_id, now)


def _longest(item: vector_store.Queued) -> int:
    return max((len(e.text) for e in item.entries), default=0)


def _chunks(items: list[vector_store.Queued]) -> list[list[vector_store.Queued]]:
    """Consecutive groups of queued sources of at most CHUNK texts each (a source with more
    passages than that is a chunk of its own)."""
    out: list[list[vector_store.Queued]] = []
    size = 0
    for item in items:
        n = len(item.entries)
        if not out or size + n > CHUNK:
            out.append([])
            size = 0
        out[-1].append(item)
        size += n
    return out
