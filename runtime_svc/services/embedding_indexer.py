"""The background indexer: embeds queued sources in batches, off the write path.

Inserts only queue the source (in their own transaction); this worker takes the oldest
queued sources, embeds the text of each of their search index entries (a whole-text memory
has one, a conversation one per passage: the message with its context window, as the
lexical side indexes it) outside any transaction (the model may take
hundreds of milliseconds), then stores the vectors in one write transaction per batch. A
source purged in between (revoked, erased) is no longer queued when the vectors are
stored, and gets none. Until its vector is stored, a source is ranked by its words alone.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict

from runtime_svc.domain.embeddings import Embedder, Vector
from runtime_svc.services.clock import Clock
from runtime_svc.storage import vectors
from runtime_svc.storage.db import Database
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.embeddings")
IDLE_WAIT_S = 5.0  # a wake-up comes with every commit that queued something; this is a backstop
MAX_BACKOFF_S = 30.0
CHUNK = 16  # texts per forward pass: queries waiting for the model wait at most one chunk


class EmbeddingIndexer:
    def __init__(
        self, db: Database, uow: UnitOfWork, embedder: Embedder, clock: Clock, batch_size: int
    ) -> None:
        self._db, self._uow, self._embedder, self._clock = db, uow, embedder, clock
        self._batch = batch_size
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
            try:
                done = self.run_once()
                backoff = 0.0
            except Exception as e:  # the batch stays queued and is tried again
                backoff = min(MAX_BACKOFF_S, max(0.5, backoff * 2))
                log.warning(
                    "embedding a batch failed; retrying",
                    extra={"error": type(e).__name__, "retry_in_s": backoff},
                )
                self._wake.wait(backoff)
                continue
            if not done:
                self._wake.wait(IDLE_WAIT_S)
                self._wake.clear()

    def run_once(self) -> int:
        """Embeds and stores one batch; returns how many sources it took off the queue."""
        with self._db.reader.connect() as conn:
            items = vectors.take(conn, self._batch, self._uow.window)
            conn.rollback()
        if not items:
            return 0
        texts = [t for i in items for t in i.texts]
        embedded: list[Vector] = []
        for start in range(0, len(texts), CHUNK):
            embedded += self._embedder.embed(texts[start : start + CHUNK])
        at = 0
        by_tenant: dict[str, list[tuple[vectors.Queued, list[Vector]]]] = defaultdict(list)
        for item in items:
            n = len(item.entries)
            by_tenant[item.tenant_id].append((item, embedded[at : at + n]))
            at += n
        now = self._clock()
        with self._uow.batch():
            for tenant_id, group in by_tenant.items():
                with self._uow.write(tenant_id) as tx:
                    for item, embedded_entries in group:
                        if not item.entries:
                            vectors.drop(tx.conn, item)
                        else:
                            vectors.store(
                                tx.conn, item, self._embedder.model_id, embedded_entries, now
                            )
        return len(items)
