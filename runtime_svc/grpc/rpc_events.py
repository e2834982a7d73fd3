"""The runtime's RPCs of the audit chain (receipts, verification) and the event stream."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from agentmem.v1 import audit_pb2, events_pb2
from runtime_svc.grpc import enums, mapping
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase


class EventRpcs(ServicerBase):
    async def ListAuditReceipts(
        self, request: audit_pb2.ListAuditReceiptsRequest, context: Context
    ) -> audit_pb2.ListAuditReceiptsResponse:
        rows, token = await self._run(
            self._audit.list,
            CALLER.get(),
            request.target_id,
            request.page_size,
            request.page_token,
            request.newest_first,
        )
        return audit_pb2.ListAuditReceiptsResponse(
            receipts=[mapping.receipt_of(r) for r in rows], next_page_token=token
        )

    async def VerifyAuditChain(
        self, request: audit_pb2.VerifyAuditChainRequest, context: Context
    ) -> audit_pb2.VerifyAuditChainResponse:
        result = await self._run(self._audit.verify, CALLER.get())
        return audit_pb2.VerifyAuditChainResponse(
            ok=result.ok,
            length=result.length,
            head_hash=result.head_hash,
            first_invalid_sequence=result.first_invalid_sequence,
        )

    async def WatchEvents(
        self, request: events_pb2.WatchEventsRequest, context: Context
    ) -> AsyncIterator[events_pb2.WatchEventsResponse]:
        """The tenant's event log from `after_sequence` on, then live (the gateway resumes
        a broken stream and fans it out to its watchers)."""
        caller = CALLER.get()
        kinds = sorted({enums.EVENT_KINDS.from_proto("kinds", k) for k in request.kinds})
        position = request.after_sequence
        await context.send_initial_metadata(())  # tells the gateway the stream is open
        waiter = self._wakeups.waiter(caller.tenant_id)
        try:
            while True:
                waiter.clear()  # before reading: a commit after this read wakes us
                batch = await self._run(self._feed.after, caller, position, kinds)
                for logged in batch:
                    yield events_pb2.WatchEventsResponse(event=mapping.event(logged))
                if batch:
                    position = batch[-1].sequence
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), timeout=self._poll)
        finally:
            self._wakeups.release(caller.tenant_id, waiter)
