"""The runtime servicer's common part: its use cases, and how a call runs them (off the
event loop, on it when alone, or through group commit); the caller of each call."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import grpc

from agentmem.contract import save_intents
from agentmem_kernel import internal_call
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from runtime_svc.domain.caller import Caller
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.services.appends import Appends
from runtime_svc.services.audit import Audit
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.fact_retraction import FactRetraction
from runtime_svc.services.facts import Facts
from runtime_svc.services.foreign import ForeignSources
from runtime_svc.services.inserts import Inserts
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.source_lifecycle import SourceLifecycle
from runtime_svc.services.source_reads import SourceReads
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage.group_commit import GroupCommitter

T = TypeVar("T")
CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")
# The servicer context of a call (request and response types are the method's own).
Context = grpc.aio.ServicerContext[Any, Any]


class ServicerBase:
    def __init__(
        self,
        *,
        thread_modes: ThreadModes,
        inserts: Inserts,
        reads: SourceReads,
        lifecycle: SourceLifecycle,
        retrieval: Retrieval,
        facts: Facts,
        retraction: FactRetraction,
        foreign: ForeignSources,
        audit: Audit,
        feed: EventFeed,
        wakeups: TenantWakeups,
        pool: ThreadPoolExecutor,
        writer: GroupCommitter,
        poll_interval: float,
        alone: Callable[[], bool],
        appends: Appends,
    ) -> None:
        """`alone`: whether the call asking is the only one in flight (see `_read`)."""
        self._thread_modes, self._retrieval = thread_modes, retrieval
        self._inserts, self._reads, self._lifecycle = inserts, reads, lifecycle
        self._audit, self._feed, self._facts = audit, feed, facts
        self._foreign, self._retraction = foreign, retraction
        self._wakeups, self._pool, self._poll = wakeups, pool, poll_interval
        self._writer = writer
        self._alone = alone
        self._appends = appends

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def _read(self, fn: Callable[..., T], *args: object) -> T:
        """A short read: on the event loop's own thread when no other call is in flight,
        where the hand-off to the pool and back costs much of what the read does
        (docs/benchmarks.md, design measurements; a call arriving meanwhile starts when it
        ends); beside other calls, on the pool."""
        if self._alone():
            return fn(*args)
        return await self._run(fn, *args)

    async def _write(self, fn: Callable[..., T], *args: object) -> T:
        """Mutations go through group commit (one writer, one commit per batch)."""
        return await self._writer.run(fn, *args)


def caller_from(ctx: rpb.CallContext) -> Caller:
    kinds = {v: k for k, v in internal_call.PRINCIPAL_KINDS.items()}
    return Caller(
        tenant_id=ctx.tenant_id,
        principal_id=ctx.principal_id,
        principal_kind=kinds.get(ctx.principal_kind, "service"),
        scopes=frozenset(ctx.scopes),
        request_id=ctx.request_id,
        surface=ctx.surface or "grpc",
        # An older gateway sends no trust list: its callers keep every intent (the default).
        trusted_save_intents=frozenset(ctx.save_intent_trust.intents)
        if ctx.HasField("save_intent_trust")
        else save_intents.ALL,
    )
