"""Finishes erasures in storage: scrubs the database's files of erased bytes (a WAL
checkpoint on SQLite, a VACUUM on PostgreSQL), retrying until it succeeds, and says so with
an event (`source_erasure_finished`) and a receipt (`source.erase.finish`) per source.

Each erasure records its physical part as pending in its own transaction
(`storage.erasures`). Right after it commits, SQLite is scrubbed at once (waiting at most
`FIRST_WAIT_MS` for readers, so a reader holding an old snapshot cannot stall writes);
whatever is left pending — PostgreSQL's VACUUM, a checkpoint a reader kept busy — is done
by a background thread, retried with back-off up to `MAX_RETRY_S` until it succeeds, and
again at start-up for erasures a crash left pending. A scrub covers the erasures that were
pending when it started: those are the ones it marks scrubbed.

The process's memory is scrubbed too: what its caches worked out from memories' texts is
keyed by the texts' digests and words (`domain.digest_cache`), and no hash of erased content
is kept. The process that erases empties them at once; every other one when it next looks
at the erasures recorded (`forget_erased_elsewhere`, every minute).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict

from runtime_svc.domain import digest_cache
from runtime_svc.domain.audit import Action
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.erasure import physical_erasure
from runtime_svc.domain.events import SourceErasureFinished
from runtime_svc.services.clock import Clock
from runtime_svc.services.journal import Journal, Target
from runtime_svc.storage import erasures
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.erasure")
FIRST_WAIT_MS = 100  # right after the erasure, on the writer's thread
RETRY_WAIT_MS = 50  # each background attempt (writes wait meanwhile)
FIRST_RETRY_S, MAX_RETRY_S = 0.05, 2.0
RUNTIME = "agentmem-runtime"  # the principal of the receipts this writes


class ErasureFinisher:
    def __init__(self, uow: UnitOfWork, journal: Journal, clock: Clock) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock
        self._round = threading.Lock()  # one scrub-and-mark at a time
        self._wake = threading.Event()
        self._stopping = False
        self._waiting = False  # the last attempt found a reader in the way
        # Erasures recorded (and the latest's time) when the caches were last emptied.
        self._erasures_seen = (-1, -1)
        self._forget_again = False  # at the next look too (a search of an older snapshot)
        self._thread = threading.Thread(target=self._loop, name="erasure-finisher", daemon=True)

    def start(self) -> None:
        """Starts the background thread; it first finishes what a crash left pending."""
        self._wake.set()
        self._thread.start()

    def pending(self) -> int:
        """Erasures whose physical part is pending (all tenants; for a gauge)."""
        with self._uow.read("") as tx:
            return len(erasures.pending(tx.conn))

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def after_erasure(self) -> None:
        """An erasure committed (on the writer's thread): SQLite is scrubbed now if no
        reader stands in the way; anything left goes to the background thread. The
        process's caches of what memories' texts hold are emptied first."""
        digest_cache.forget_all()
        done = False
        if self._uow.backend == "sqlite" and self._round.acquire(blocking=False):
            try:
                done = self._finish_round(FIRST_WAIT_MS)
            finally:
                self._round.release()
        if not done:
            self._wake.set()

    def forget_erased_elsewhere(self) -> None:
        """Empties the process's caches of what memories' texts hold when an erasure was
        recorded since the last look (by another runtime: this one's empty them at once),
        and again at the next look, in case a search of a snapshot older than the erasure
        filled them meanwhile."""
        with self._uow.read("") as tx:
            seen = erasures.recorded(tx.conn)
        if seen != self._erasures_seen or self._forget_again:
            digest_cache.forget_all()
            self._forget_again = seen != self._erasures_seen
            self._erasures_seen = seen

    def _loop(self) -> None:
        delay = FIRST_RETRY_S
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            with self._round:
                try:
                    done = self._finish_round(RETRY_WAIT_MS)
                except Exception:  # the database unreachable, ...: try again later
                    log.exception("finishing erasures failed; will retry")
                    done = False
            if done:
                delay = FIRST_RETRY_S
                continue
            self._wake.wait(delay)  # retried after the delay, or sooner on a new erasure
            self._wake.set()
            delay = min(delay * 2, MAX_RETRY_S)

    def _finish_round(self, wait_ms: int) -> bool:
        """Whether nothing is left pending that one pass could finish."""
        with self._uow.read("") as tx:
            found = erasures.pending(tx.conn)
        if not found:
            return True
        if not self._uow.scrub(wait_ms):
            if not self._waiting:  # once per wait, not at every retry
                log.warning(
                    "erasure: storage not yet scrubbed, a reader holds an older snapshot; "
                    "retrying until it is gone",
                    extra={"sources": len(found)},
                )
            self._waiting = True
            return False
        self._waiting = False
        digest_cache.forget_all()  # again: a reader of an older snapshot may have refilled them
        by_tenant: dict[str, list[str]] = defaultdict(list)
        for p in found:
            by_tenant[p.tenant_id].append(p.source_id)
        for tenant_id, source_ids in by_tenant.items():
            self._mark(tenant_id, source_ids)
        log.info("erasure: storage scrubbed", extra={"sources": len(found)})
        return True

    def _mark(self, tenant_id: str, source_ids: list[str]) -> None:
        caller = Caller(tenant_id, RUNTIME, "service", frozenset())
        with self._uow.write(tenant_id) as tx:
            now = self._clock()
            state = physical_erasure(self._uow.backend, True, now)
            for source_id in tx.erasures.mark_scrubbed(source_ids, now):
                stored = tx.sources.get(source_id)
                self._journal.record(
                    tx,
                    caller,
                    action=Action.SOURCE_ERASE_FINISH,
                    target=Target("source", source_id, stored.source.revision if stored else 0),
                    event=SourceErasureFinished(source_id, state.state.value, now),
                    at_us=now,
                )
