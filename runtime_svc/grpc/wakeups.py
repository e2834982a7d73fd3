"""Wakes event streams when their tenant's log grows.

Writers commit in worker threads and call `notify(tenant)`; streams wait on the event loop.
The log in the database stays the truth: a stream always re-reads it after waking, and
also re-reads after `poll_interval` so it sees events that another replica wrote.

Notifications coalesce: a group commit of many mutations notifies once per mutation, but the
loop is woken once for every tenant notified until it runs (one cross-thread wake-up). A
tenant nobody watches wakes nothing: a write's thread then does not hand the interpreter to
the loop for nothing while its caller waits for the write's outcome. A stream registers its
waiter before it reads, so an event committed before the registration is read, and one
committed after it is notified.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict


class TenantWakeups:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._lock = threading.Lock()
        self._notified: set[str] = set()  # tenants to wake when the loop next runs `_wake`

    def notify(self, tenant_id: str) -> None:
        """Thread-safe."""
        if tenant_id not in self._waiters:  # read as the loop last left it: see above
            return
        with self._lock:
            scheduled = bool(self._notified)  # a `_wake` is already on its way
            self._notified.add(tenant_id)
        if not scheduled:
            self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        with self._lock:
            tenants, self._notified = self._notified, set()
        for tenant_id in tenants:
            for waiter in self._waiters.get(tenant_id, ()):
                waiter.set()

    def waiter(self, tenant_id: str) -> asyncio.Event:
        """An event set whenever the tenant's log grows; `release` it when done."""
        waiter = asyncio.Event()
        self._waiters[tenant_id].add(waiter)
        return waiter

    def release(self, tenant_id: str, waiter: asyncio.Event) -> None:
        waiters = self._waiters.get(tenant_id)
        if waiters is not None:
            waiters.discard(waiter)
            if not waiters:
                del self._waiters[tenant_id]
