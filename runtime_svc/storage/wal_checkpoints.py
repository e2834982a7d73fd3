"""SQLite: the write-ahead log copied back into the database file by a thread of its own,
not by the commit that fills it.

Left to SQLite, the commit that takes the log past `wal_autocheckpoint` pages (1,000 by
default) checkpoints it before returning: it writes every page the log holds into the
database file and syncs both, and the next commit starts the log anew and syncs its header.
A write the caller waits for then pays for the writes before it (an append of one turn to a
BEAM session adds about 160 pages, so one call in six did; docs/benchmarks.md). Here the
writer connections checkpoint on their own only past a limit far above it, should this
thread fall behind (`db.CHECKPOINT_APART_PAGES`), and the thread checkpoints the log
(PASSIVE: it never waits for, nor blocks, a reader or a writer) `INTERVAL_S` after the first
commit it is told of, and again as long as commits follow. A page written by several
commits of that time is copied once.

Durability is unchanged: a commit is in the log when it returns (`storage.sqlite_synchronous`
says when the log is synced); a checkpoint only moves committed pages.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from runtime_svc.storage.db import Database

log = logging.getLogger("agentmem.runtime.checkpoints")

INTERVAL_S = 0.1  # how long the commits of a burst gather before their pages are copied


class WalCheckpointer:
    def __init__(self, db: Database, interval_s: float = INTERVAL_S) -> None:
        """Starts the thread; `committed` tells it of each commit (SQLite only)."""
        self._db = db
        self._interval = interval_s
        self._commits = 0  # commits told of (written by the committing thread only)
        self._idle = False  # the thread waits for a commit
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.checkpoints = 0  # checkpoints run (tests wait for them)
        self._done = threading.Condition()
        self._thread = threading.Thread(target=self._loop, name="wal-checkpoints", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """A write transaction committed (called by the unit of work after each commit). No
        wake-up while the thread already waits out its interval: the committing thread hands
        the interpreter over as rarely as it can."""
        self._commits += 1
        if self._idle:
            self._wake.set()

    def wait_for(self, checkpoints: int, timeout: float) -> bool:
        """Until at least `checkpoints` ran (for tests); whether they did."""
        with self._done:
            return self._done.wait_for(lambda: self.checkpoints >= checkpoints, timeout)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        # A connection of its own, kept: one taken from the writers' pool would be handed to
        # the next write in turn, whose page cache SQLite then drops (another connection
        # committed since that one's last transaction).
        try:
            raw = self._db.writer.raw_connection()
        except Exception as e:  # the writers checkpoint past their own limit
            log.warning("no checkpoint connection", extra={"error": type(e).__name__})
            return
        try:
            self._run(raw)
        finally:
            raw.close()

    def _run(self, raw: Any) -> None:
        seen = 0
        while not self._stop.is_set():
            self._idle = True
            if self._commits == seen:  # nothing new since the last checkpoint
                self._wake.wait()
            self._wake.clear()
            self._idle = False
            if self._stop.wait(self._interval):
                return
            seen = self._commits
            self._checkpoint(raw)

    def _checkpoint(self, raw: Any) -> None:
        try:  # autocommit: no BEGIN around it
            with self._db.checkpoint_turn:  # an erasure's scrub checkpoints too
                raw.cursor().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except Exception as e:  # the next burst's checkpoint tries again
            log.warning("checkpoint failed", extra={"error": type(e).__name__})
        with self._done:
            self.checkpoints += 1
            self._done.notify_all()
