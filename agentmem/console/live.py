"""Live updates: the person's `WatchEvents` stream, as Server-Sent Events for the page.

Events carry ids and states only; the page answers a `change` by fetching the list again
through the gateway, so no memory text ever travels on the event stream. Bursts (a replay
after reconnecting, an agent inserting many memories) are coalesced into one `change`.
The session remembers the last sequence seen, so a new page resumes instead of replaying.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from agentmem.console.gateway import Gateway
from agentmem.console.gateway_values import GatewayError
from agentmem.console.sessions import Session
from agentmem.console.web import console
from agentmem.v1 import events_pb2

# What the reader hands the stream: events, then the failure or None for the stream's end.
Queue = asyncio.Queue[events_pb2.Event | GatewayError | None]
QUIET_S = 0.2
RETRY_MS = 3000


async def events(request: Request) -> Response:
    session = console(request).session(request)
    if session is None or not session.signed_in:
        return PlainTextResponse("sign in first", status_code=401)
    return EventSourceResponse(_stream(console(request).gateway, session), ping=15, send_timeout=30)


async def _stream(gateway: Gateway, session: Session) -> AsyncIterator[Mapping[str, object]]:
    queue: Queue = asyncio.Queue()
    reader = asyncio.create_task(_read(gateway, session, queue))
    try:
        caught_up = await _burst(queue, session)  # the replay since the last sequence seen
        yield {"event": "ready", "data": "{}", "retry": RETRY_MS}
        if caught_up:
            yield _change(caught_up)
        while True:
            kinds = await _burst(queue, session, wait=None)
            if kinds is None:
                return
            yield _change(kinds)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def _read(gateway: Gateway, session: Session, queue: Queue) -> None:
    try:
        async for event in gateway.watch(session.token, session.event_position):
            await queue.put(event)
    except GatewayError as e:
        await queue.put(e)
    await queue.put(None)


async def _burst(queue: Queue, session: Session, wait: float | None = QUIET_S) -> set[str] | None:
    """Events until the stream is quiet for QUIET_S; the first one waits `wait` (None:
    forever). Returns the kinds seen, or None when the stream ended."""
    kinds: set[str] = set()
    timeout = wait
    while True:
        try:
            item = await asyncio.wait_for(queue.get(), timeout)
        except TimeoutError:
            return kinds
        if item is None or isinstance(item, GatewayError):
            return kinds or None
        session.event_position = max(session.event_position, item.sequence)
        kinds.add(item.WhichOneof("payload") or "")
        timeout = QUIET_S


def _change(kinds: set[str]) -> dict[str, str]:
    return {"event": "change", "data": json.dumps({"kinds": sorted(kinds)})}
