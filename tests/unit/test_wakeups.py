"""Event streams' wake-ups (`runtime_svc.grpc.wakeups`): a commit of a tenant nobody watches
wakes nothing; a watched one wakes its streams once until the loop runs."""

from __future__ import annotations

import asyncio

from runtime_svc.grpc.wakeups import TenantWakeups


def test_only_a_watched_tenant_wakes_the_loop():
    async def run() -> None:
        loop = asyncio.get_running_loop()
        scheduled: list[object] = []
        real = loop.call_soon_threadsafe

        def counted(callback, *args):
            scheduled.append(callback)
            return real(callback, *args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        wakeups = TenantWakeups(loop)
        wakeups.notify("tenant-a")  # nobody watches: the loop is not woken
        assert scheduled == []
        waiter = wakeups.waiter("tenant-a")
        wakeups.notify("tenant-b")
        assert scheduled == []
        wakeups.notify("tenant-a")
        wakeups.notify("tenant-a")  # coalesced with the first
        assert len(scheduled) == 1
        await asyncio.wait_for(waiter.wait(), timeout=10)
        wakeups.release("tenant-a", waiter)
        wakeups.notify("tenant-a")
        assert len(scheduled) == 1

    asyncio.run(run())
