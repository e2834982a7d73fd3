"""Fan-out of the event log to one watcher, with a bounded queue and transparent resume.

A pump reads the runtime's event stream into a queue of `queue_size` events; the watcher's
stream drains it. When the watcher falls behind by a full queue it is cut off with
RESOURCE_EXHAUSTED / SUBSCRIBER_TOO_SLOW after the events already queued, and can resume
from the last sequence it saw (each cut delivers at least a queue's worth, so a watcher that
resumes always makes progress).
If the runtime connection drops, the pump reconnects from the last sequence it queued,
so the watcher sees no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from agentmem.contract.errors import AgentmemError, Reason
from agentmem.v1 import events_pb2
from protocol_svc.runtime_client import RuntimeUnavailable

log = logging.getLogger("agentmem.gateway.watch")
# The upstream stream for a resume request; it calls its second argument once connected.
Upstream = Callable[
    [events_pb2.WatchEventsRequest, Callable[[], None]], AsyncIterator[events_pb2.Event]
]
_DONE = object()
# The queues of the watchers open on this gateway (for the queue-depth metrics).
ACTIVE: set[asyncio.Queue[Any]] = set()


async def watch(
    request: events_pb2.WatchEventsRequest,
    upstream: Upstream,
    *,
    queue_size: int,
    reconnect_for: float,
    credential_expires: float | None = None,
) -> AsyncIterator[events_pb2.Event]:
    """`credential_expires` (epoch seconds): the stream ends then with UNAUTHENTICATED /
    TOKEN_EXPIRED, events queued or not; the watcher resumes with a fresh credential."""
    # One place more than the events: the last one is kept for what ends the stream.
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=queue_size + 1)
    pump = asyncio.create_task(_pump(request, upstream, queue, reconnect_for))
    ACTIVE.add(queue)
    try:
        while True:
            if credential_expires is None:
                item = await queue.get()
            else:
                try:
                    item = await asyncio.wait_for(queue.get(), credential_expires - time.time())
                except TimeoutError:
                    item = None
                if item is None or time.time() >= credential_expires:
                    raise AgentmemError(Reason.TOKEN_EXPIRED)
            if isinstance(item, BaseException):
                raise item
            if item is _DONE:
                return
            yield item
    finally:
        ACTIVE.discard(queue)
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump


async def _pump(
    request: events_pb2.WatchEventsRequest,
    upstream: Upstream,
    queue: asyncio.Queue[Any],
    reconnect_for: float,
) -> None:
    """Reconnects for up to `reconnect_for` seconds counted from each disconnect (not from
    the start of the watch), so an hour-old idle watcher survives a runtime restart too."""
    position = request.after_sequence
    down_since: float | None = None
    attempt = 0

    def connected() -> None:
        nonlocal down_since, attempt
        down_since, attempt = None, 0

    try:
        while True:
            resume = events_pb2.WatchEventsRequest(after_sequence=position, kinds=request.kinds)
            try:
                async for event in upstream(resume, connected):
                    if queue.qsize() >= queue.maxsize - 1:
                        _fail(queue, AgentmemError(Reason.SUBSCRIBER_TOO_SLOW))
                        return
                    queue.put_nowait(event)
                    position = event.sequence
                _fail(queue, _DONE)
                return
            except RuntimeUnavailable:
                now = time.monotonic()
                down_since = now if down_since is None else down_since
                if now - down_since >= reconnect_for:
                    raise
                attempt += 1
                log.info("watch reconnecting", extra={"after_sequence": position})
                await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
    except asyncio.CancelledError:
        raise
    except BaseException as e:
        _fail(queue, e)


def _fail(queue: asyncio.Queue[Any], item: Any) -> None:
    """Queues `item` in the place kept for it: the watcher gets the events queued before
    it, then the stream ends."""
    queue.put_nowait(item)
