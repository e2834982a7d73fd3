"""Erased means unrecoverable from storage, not only from queries.

SQLite: `PRAGMA secure_delete` (set on every connection) overwrites deleted content, and the
FTS5 tables run with `secure-delete`, so an erasure's transaction itself removes the words
from the database pages; what remains are older copies of those pages in the write-ahead
log, which a checkpoint that truncates the log removes once the erasure committed.

PostgreSQL keeps deleted and updated row versions until VACUUM; the erasure's commit starts a
VACUUM of the tables it touched (in the background, coalescing erasures that arrive while it
runs). Until it finishes, and in the WAL segments and free space of data files until they are
reused, the old versions are readable by someone with access to the server's files (see
README: "Erasure").
"""

from __future__ import annotations

import logging
import threading

from runtime_svc.storage.db import Database

log = logging.getLogger("agentmem.runtime.scrub")
PG_TABLES = (
    "sources",
    "facts",
    "prompt_records",
    "derived_provenance",
    "search_postings",
    "search_terms",
)


class Scrubber:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._pending = False
        self._running = False
        self._finished = threading.Condition()
        self.completed = 0  # scrubs finished (PostgreSQL: vacuums)

    def _done(self) -> None:
        with self._finished:
            self.completed += 1
            self._finished.notify_all()

    def wait_for(self, completed: int, timeout: float) -> bool:
        """Whether `completed` scrubs have finished within `timeout` seconds."""
        with self._finished:
            return self._finished.wait_for(lambda: self.completed >= completed, timeout)

    def scrub(self) -> None:
        if self._db.dialect == "sqlite":
            self._checkpoint()
            return
        with self._lock:
            self._pending = True
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._vacuum_loop, name="agentmem-vacuum", daemon=True).start()

    def _checkpoint(self) -> None:
        try:
            raw = self._db.writer.raw_connection()  # autocommit: no BEGIN around it
            try:
                cursor = raw.cursor()
                busy, _, _ = cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                cursor.close()
            finally:
                raw.close()
            if busy:
                log.warning("erasure: the WAL checkpoint was busy; the next one completes it")
            self._done()
        except Exception as e:  # the erasure itself committed; this only shortens the window
            log.warning("erasure: WAL checkpoint failed", extra={"error": type(e).__name__})

    def _vacuum_loop(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._running = False
                    return
                self._pending = False
            try:
                engine = self._db.writer.execution_options(isolation_level="AUTOCOMMIT")
                with engine.connect() as conn:
                    conn.exec_driver_sql("VACUUM " + ", ".join(PG_TABLES))
                self._done()
            except Exception as e:
                log.warning("erasure: VACUUM failed", extra={"error": type(e).__name__})
