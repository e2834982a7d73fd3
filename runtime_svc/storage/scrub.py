"""Scrubbing storage after an erasure: the step that removes the old copies of erased bytes
from the database's files, once the erasure itself has committed.

SQLite: `PRAGMA secure_delete` (set on every connection) overwrites deleted content, and the
FTS5 tables run with `secure-delete`, so an erasure's transaction itself removes the words
from the cells it deletes. Two kinds of copy remain: a cell that an earlier page split or
merge moved to another page leaves its old bytes in the free space of the page it left
(secure delete zeroes deleted cells, not the gaps a rebalance leaves), and older copies of
pages sit in the write-ahead log and in pages of the database file the log has not yet been
checkpointed into. VACUUM rebuilds every page from the live rows only, and a checkpoint that
truncates the log removes the rest; the checkpoint cannot finish while a reader holds an
older snapshot (it reports busy), so it is retried until it does
(`runtime_svc.services.erasure_finisher`). VACUUM holds the write lock while it rewrites the
file: an erasure costs a rewrite of the database, once per round of erasures.

PostgreSQL keeps deleted and updated row versions until VACUUM; after an erasure the tables
it touched are vacuumed. Copies in the data files' free space, WAL segments, archives and
replicas remain until reused or removed by an operator (docs/erasure.md).
"""

from __future__ import annotations

import logging

from runtime_svc.storage.db import Database

log = logging.getLogger("agentmem.runtime.scrub")
PG_TABLES = (
    "sources",
    "source_turns",
    "facts",
    "prompt_records",
    "derived_provenance",
    "search_postings",
    "search_terms",
    "physical_erasures",
)


class Scrubber:
    def __init__(self, db: Database, busy_timeout_ms: int) -> None:
        self._db = db
        self._busy_timeout_ms = busy_timeout_ms  # the connections' own, restored after

    def scrub(self, wait_ms: int) -> bool:
        """One attempt; whether storage holds no copy of what was erased before it started.
        SQLite waits at most `wait_ms` for readers of older snapshots (while it waits, new
        writes wait too)."""
        try:
            if self._db.dialect == "sqlite":
                return self._checkpoint(wait_ms)
            self._vacuum()
            return True
        except Exception as e:  # the erasure itself committed; the next attempt goes on
            log.warning("erasure: scrubbing storage failed", extra={"error": type(e).__name__})
            return False

    def _checkpoint(self, wait_ms: int) -> bool:
        raw = self._db.writer.raw_connection()  # autocommit: no BEGIN around it
        try:
            cursor = raw.cursor()
            cursor.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
            try:
                cursor.execute("VACUUM")
                with self._db.checkpoint_turn:  # after a checkpoint running, if one is
                    busy, _, _ = cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                cursor.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
                cursor.close()
        finally:
            raw.close()
        return not busy

    def _vacuum(self) -> None:
        engine = self._db.writer.execution_options(isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql("VACUUM " + ", ".join(PG_TABLES))
