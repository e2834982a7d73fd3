"""A connection's notifications: the gateway's event stream, as host notifications.

Which notifications a connection gets is decided once, at `initialize`: the kinds of event
whose capabilities the gateway serves to this connection (experimental ones only with
`experimentalApi`), less the methods it opted out of. Only those kinds are asked of the
gateway, so the rest never leave it. The gateway scopes the stream to the caller's tenant
and scope; each notification carries ids and states only, never memory text.

Without a resume point the connection is told of changes from its `initialize` on: the
stream is read from the oldest retained event and events committed before the handshake
(less `CLOCK_SKEW`, so a change racing the handshake is told rather than lost) are passed
over. The bridge keeps no position of its own: the host resumes with the last
`eventSequence` it saw.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agentmem.app_server import wire
from agentmem.app_server.gateway import Gateway
from agentmem.app_server.handshake import EVENTS_STOPPED, EventsStoppedNotification
from agentmem.app_server.methods import NOTIFICATIONS, Notification
from agentmem.client import protojson
from agentmem.client.errors import ApiError

log = logging.getLogger("agentmem.app_server.notifications")
Send = Callable[[dict[str, Any]], Awaitable[None]]
CLOCK_SKEW = 2.0


def visible(
    enabled: Iterable[str], experimental: Iterable[str], experimental_api: bool
) -> list[Notification]:
    """The notifications a connection may be sent, before its opt-outs."""
    served = set(enabled) - (set() if experimental_api else set(experimental))
    return [n for n in NOTIFICATIONS.values() if n.capabilities <= served]


async def relay(
    gateway: Gateway,
    send: Send,
    wanted: list[Notification],
    resume_after: int | None,
    *,
    stopped_wanted: bool = True,
) -> None:
    """Sends every wanted event as its notification, until cancelled or the stream fails
    for good (then `memory/events/stopped` says why and where it stopped)."""
    if not wanted:
        return
    by_payload = {n.event: n for n in wanted}
    last = resume_after or 0
    since = None if resume_after is not None else time.time() - CLOCK_SKEW
    try:
        async for event in gateway.watch(last, sorted(n.kind for n in wanted)):
            last = event.sequence
            if since is not None:
                if event.at.ToMicroseconds() / 1e6 < since:
                    continue
                since = None  # from here on every event is new to this connection
            payload = event.WhichOneof("payload")
            notification = by_payload.get(payload or "")
            if notification is None:
                continue
            params = protojson.to_json(getattr(event, payload or ""))
            params["eventSequence"] = event.sequence
            await send(wire.notification(notification.name, params))
    except ApiError as e:
        reason = e.reason or e.status_code.name
        log.warning("notifications stopped", extra={"reason": reason, "after_sequence": last})
        if stopped_wanted:
            stopped = EventsStoppedNotification(
                reason=reason, message=e.message if e.reason else reason, last_event_sequence=last
            )
            await send(wire.notification(EVENTS_STOPPED, stopped.model_dump(by_alias=True)))
