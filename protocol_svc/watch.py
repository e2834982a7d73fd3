"""Fan-out of the event log to one watcher, with a bounded queue and transparent resume.

A pump reads the runtime's event stream into a queue of `queue_size` events; the watcher's
stream drains it. When the watcher falls behind by a full queue it is cut off with
RESOURCE_EXHAUSTED / SUBSCRIBER_TOO_SLOW and can resume from the last sequence it saw.
If the runtime connection drops, the pump reconnects from the last sequence it queued,
so the watcher sees no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay

from agentmem.core.errors import AgentmemError, Reason
from agentmem.v1 import events_pb2
from protocol_svc.runtime_client import BACKOFF, RuntimeUnavailable

Upstream = Callable[[events_pb2.WatchEventsRequest], AsyncIterator[events_pb2.Event]]
_DONE = object()
# The queues of the watchers open on this gateway (for the queue-depth metrics).
ACTIVE: set[asyncio.Queue[Any]] = set()


async def watch(
    request: events_pb2.WatchEventsRequest,
    upstream: Upstream,
    *,
    queue_size: int,
    reconnect_for: float,
) -> AsyncIterator[events_pb2.Event]:
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=queue_size)
    pump = asyncio.create_task(_pump(request, upstream, queue, reconnect_for))
    ACTIVE.add(queue)
    try:
        while True:
            item = await queue.get()
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
    position = request.after_sequence
    try:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(RuntimeUnavailable),
            stop=stop_after_delay(reconnect_for),
            wait=BACKOFF,
            reraise=True,
        ):
            with attempt:
                resume = events_pb2.WatchEventsRequest(after_sequence=position, kinds=request.kinds)
                async for event in upstream(resume):
                    try:
                        queue.put_nowait(event)
                    except asyncio.QueueFull:
                        _fail(queue, AgentmemError(Reason.SUBSCRIBER_TOO_SLOW))
                        return
                    position = event.sequence
        _fail(queue, _DONE)
    except asyncio.CancelledError:
        raise
    except BaseException as e:
        _fail(queue, e)


def _fail(queue: asyncio.Queue[Any], item: Any) -> None:
    """Replaces what is queued by `item`: the watcher is cut off at the next read."""
    while not queue.empty():
        queue.get_nowait()
    queue.put_nowait(item)
