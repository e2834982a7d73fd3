"""Group commit: mutations queue for one writer thread, which runs those waiting together in
one transaction (each in its own savepoint) and commits once.

Each mutation still sees every earlier one (they run one after another on the same
connection), fails alone (its savepoint is rolled back), and is answered only after the
commit that makes it durable; if that commit fails, every mutation of the batch fails.
Under load this turns N commits into one; alone, a mutation runs at once. `idle_for` tells
background work (the embedding indexer) how long the write path has been idle, so it can
stay out of the way of mutations.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from agentmem.core import metrics
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.writes")
_STOP = object()


class GroupCommitter:
    def __init__(self, uow: UnitOfWork, max_batch: int) -> None:
        self._uow = uow
        self._max = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._running = False
        self._last_active = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="runtime-writer", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        # The caller's context (its trace span) travels with the job; so does the time it
        # was queued, for the wait metric.
        context = contextvars.copy_context()
        self._last_active = time.monotonic()
        self._queue.put((context.run, (fn, *args), future, time.perf_counter()))
        return future

    def idle_for(self) -> float:
        """Seconds since the last mutation was queued or finished; 0 while any is waiting or
        running."""
        if self._running or not self._queue.empty():
            return 0.0
        return max(0.0, time.monotonic() - self._last_active)

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is _STOP:
                return
            jobs = [job]
            while len(jobs) < self._max:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    self._queue.put(_STOP)
                    break
                jobs.append(more)
            started = time.perf_counter()
            for *_job, queued in jobs:
                metrics.COMMIT_WAIT.observe(started - queued)
            metrics.COMMIT_BATCH.observe(len(jobs))
            self._running = True
            try:
                self._run([job[:3] for job in jobs])
            finally:
                self._last_active = time.monotonic()
                self._running = False

    def _run(self, jobs: list[tuple[Callable[..., Any], tuple, Future[Any]]]) -> None:
        # A job whose caller went away before it ran is skipped; once running, it can no
        # longer be cancelled, so its outcome is always delivered.
        jobs = [job for job in jobs if job[2].set_running_or_notify_cancel()]
        if not jobs:
            return
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        try:
            with self._uow.batch():
                for fn, args, future in jobs:
                    try:
                        outcomes.append((future, fn(*args), None))
                    except Exception as e:  # this job alone fails
                        outcomes.append((future, None, e))
        except Exception as e:  # the commit failed: nothing of the batch is durable
            log.warning("group commit failed", extra={"jobs": len(jobs)})
            for future, _result, error in outcomes:
                future.set_exception(error or e)
            for _fn, _args, future in jobs[len(outcomes) :]:
                future.set_exception(e)
            return
        for future, result, error in outcomes:
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)
