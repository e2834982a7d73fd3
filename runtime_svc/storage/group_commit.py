"""Group commit: mutations queue for one writer thread, which runs those waiting together in
one transaction (each in its own savepoint) and commits once.

Each mutation still sees every earlier one (they run one after another on the same
connection), fails alone (its savepoint is rolled back), and is answered only after the
commit that makes it durable; if that commit fails, every mutation of the batch fails.
Under load this turns N commits into one; alone, a mutation runs at once. `idle_for` tells
background work (the embedding indexer) how long the write path has been idle, so it can
stay out of the way of mutations.

Callers on an event loop (`run`) get their outcomes in one hand-off per batch: a single
wake-up of the loop settles every future of the batch, instead of one cross-thread wake-up
(a write to the loop's self-pipe) and one loop iteration per mutation.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from agentmem_kernel import metrics
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime.writes")
_STOP = object()
T = TypeVar("T")
# Whoever waits for a job: a thread (`concurrent.futures.Future`) or a task on an event loop.
Waiter = Future[Any] | asyncio.Future[Any]


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
        """Queues a mutation; its outcome arrives on the returned future."""
        future: Future[Any] = Future()
        self._enqueue(future, fn, args)
        return future

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Queues a mutation from a task on the running event loop and waits for its outcome.
        Cancelling the task before the job runs skips the job."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._enqueue(future, fn, args)
        return await future

    def _enqueue(self, waiter: Waiter, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        # The caller's context (its trace span) travels with the job; so does the time it
        # was queued, for the wait metric.
        context = contextvars.copy_context()
        self._last_active = time.monotonic()
        self._queue.put((context.run, (fn, *args), waiter, time.perf_counter()))

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

    def _run(self, jobs: list[tuple[Callable[..., Any], tuple[Any, ...], Waiter]]) -> None:
        # A job whose caller went away before it ran is skipped; once running, it can no
        # longer be cancelled, so its outcome is always delivered.
        jobs = [job for job in jobs if _claim(job[2])]
        if not jobs:
            return
        outcomes: list[tuple[Waiter, Any, BaseException | None]] = []
        try:
            with self._uow.batch():
                for fn, args, waiter in jobs:
                    try:
                        outcomes.append((waiter, fn(*args), None))
                    except Exception as e:  # this job alone fails
                        outcomes.append((waiter, None, e))
        except Exception as e:  # the commit failed: nothing of the batch is durable
            log.warning("group commit failed", extra={"jobs": len(jobs)})
            failed = [(waiter, None, error or e) for waiter, _result, error in outcomes]
            _deliver(failed + [(waiter, None, e) for _fn, _args, waiter in jobs[len(outcomes) :]])
            return
        _deliver(outcomes)


def _claim(waiter: Waiter) -> bool:
    """Whether the job is still wanted; a thread's future can no longer be cancelled after."""
    if isinstance(waiter, Future):
        return waiter.set_running_or_notify_cancel()
    return not waiter.cancelled()  # a task's future: the outcome of a later cancel is dropped


def _deliver(outcomes: Sequence[tuple[Waiter, Any, BaseException | None]]) -> None:
    """Threads' futures are settled here; tasks' futures in one call on each loop."""
    on_loops: dict[asyncio.AbstractEventLoop, list[tuple[Waiter, Any, BaseException | None]]] = {}
    for waiter, result, error in outcomes:
        if isinstance(waiter, Future):
            _settle(waiter, result, error)
        else:
            on_loops.setdefault(waiter.get_loop(), []).append((waiter, result, error))
    for loop, settled in on_loops.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_settle_all, settled)


def _settle_all(settled: list[tuple[Waiter, Any, BaseException | None]]) -> None:
    for waiter, result, error in settled:
        if not waiter.done():  # its task may have been cancelled meanwhile
            _settle(waiter, result, error)


def _settle(waiter: Waiter, result: Any, error: BaseException | None) -> None:
    if error is None:
        waiter.set_result(result)
    else:
        waiter.set_exception(error)
