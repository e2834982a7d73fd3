"""The runtime's gRPC servicer: maps requests to use cases, runs them off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from agentmem.core import validation
from agentmem.runtime.v1 import runtime_service_pb2_grpc
from agentmem.v1 import audit_pb2, events_pb2, thread_mode_pb2
from runtime_svc.domain.caller import Caller
from runtime_svc.grpc import mapping
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.services.audit import Audit
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.thread_modes import ThreadModes

T = TypeVar("T")
CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


class RuntimeServicer(runtime_service_pb2_grpc.RuntimeServiceServicer):
    def __init__(
        self,
        *,
        thread_modes: ThreadModes,
        audit: Audit,
        feed: EventFeed,
        wakeups: TenantWakeups,
        pool: ThreadPoolExecutor,
        poll_interval: float,
    ) -> None:
        self._thread_modes, self._audit, self._feed = thread_modes, audit, feed
        self._wakeups, self._pool, self._poll = wakeups, pool, poll_interval

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def ReadThreadMemoryMode(self, request, context):  # type: ignore[no-untyped-def]
        state = await self._run(self._thread_modes.read, CALLER.get(), request.thread_id)
        return thread_mode_pb2.ReadThreadMemoryModeResponse(
            thread_id=state.thread_id,
            mode=mapping.MODES[state.mode],
            revision=state.revision,
            effective_at=mapping.timestamp(state.effective_at_us),
        )

    async def SetThreadMemoryMode(self, request, context):  # type: ignore[no-untyped-def]
        validation.enum_value("mode", request.mode, mapping.MODES_FROM_PROTO)
        change = await self._run(
            self._thread_modes.set,
            CALLER.get(),
            request.thread_id,
            request.expected_revision,
            mapping.MODES_FROM_PROTO[request.mode],
        )
        return thread_mode_pb2.SetThreadMemoryModeResponse(
            thread_id=change.current.thread_id,
            previous_mode=mapping.MODES[change.previous.mode],
            mode=mapping.MODES[change.current.mode],
            revision=change.current.revision,
            effective_at=mapping.timestamp(change.current.effective_at_us),
            receipt=mapping.receipt(change.receipt),
        )

    async def ListAuditReceipts(self, request, context):  # type: ignore[no-untyped-def]
        rows, token = await self._run(
            self._audit.list, CALLER.get(), request.target_id, request.page_size, request.page_token
        )
        return audit_pb2.ListAuditReceiptsResponse(
            receipts=[mapping.receipt(r) for r in rows], next_page_token=token
        )

    async def VerifyAuditChain(self, request, context):  # type: ignore[no-untyped-def]
        result = await self._run(self._audit.verify, CALLER.get())
        return audit_pb2.VerifyAuditChainResponse(
            ok=result.ok,
            length=result.length,
            head_hash=result.head_hash,
            first_invalid_sequence=result.first_invalid_sequence,
        )

    async def StreamEvents(  # type: ignore[no-untyped-def]
        self, request: events_pb2.WatchEventsRequest, context
    ) -> AsyncIterator[events_pb2.Event]:
        caller = CALLER.get()
        for kind in request.kinds:
            validation.enum_value("kinds", kind, mapping.EVENT_KINDS)
        kinds = sorted({mapping.EVENT_KINDS[k] for k in request.kinds})
        position = request.after_sequence
        waiter = self._wakeups.waiter(caller.tenant_id)
        try:
            while True:
                waiter.clear()  # before reading: a commit after this read wakes us
                batch = await self._run(self._feed.after, caller, position, kinds)
                for logged in batch:
                    yield mapping.event(logged)
                if batch:
                    position = batch[-1].sequence
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), timeout=self._poll)
        finally:
            self._wakeups.release(caller.tenant_id, waiter)


def caller_from(ctx) -> Caller:  # type: ignore[no-untyped-def]
    kinds = {1: "user", 2: "agent", 3: "service"}
    return Caller(
        tenant_id=ctx.tenant_id,
        principal_id=ctx.principal_id,
        principal_kind=kinds.get(ctx.principal_kind, "service"),
        scopes=frozenset(ctx.scopes),
        request_id=ctx.request_id,
    )
