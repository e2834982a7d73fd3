"""Assembles the memory runtime from its settings and starts its gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from concurrent.futures import ThreadPoolExecutor

import grpc

from agentmem.core import internal_call, paging, serving, tls, transport
from agentmem.core.config import Settings
from agentmem.core.errors import AgentmemError, Reason
from agentmem.core.guard import CallGuard
from agentmem.runtime.v1 import runtime_service_pb2, runtime_service_pb2_grpc
from runtime_svc.domain.facts import Extractor, RuleExtractor
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc.servicer import CALLER, RuntimeServicer, caller_from
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.services.audit import Audit
from runtime_svc.services.clock import system_clock
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.facts import FactExtraction, Facts
from runtime_svc.services.foreign import ForeignSources
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.memories import Memories
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime")
SERVICE = runtime_service_pb2.DESCRIPTOR.services_by_name["RuntimeService"].full_name
COMPACTION_INTERVAL_S = 60.0


async def start(settings: Settings, *, listen: str | None = None) -> serving.Served:
    if not settings.internal.token:
        raise SystemExit(
            "internal.token is not set (AGENTMEM_INTERNAL__TOKEN): the runtime "
            "accepts calls from the gateway only"
        )
    paging.configure(settings.internal.token)
    db = open_database(settings.storage)
    migrate.upgrade(db.writer)
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(settings.runtime.workers, thread_name_prefix="runtime-db")
    wakeups = TenantWakeups(loop)
    uow = UnitOfWork(db)
    writer = GroupCommitter(uow, settings.runtime.group_commit)
    journal = Journal(EventRetention(settings.events.max_events_per_tenant), wakeups.notify)
    feed = EventFeed(uow, system_clock, settings.events.retention)
    default_mode = Mode(settings.memory.default_thread_mode)
    retrieval = Retrieval(
        uow, system_clock, default_mode=default_mode, posting_budget=settings.search.posting_budget
    )
    servicer = RuntimeServicer(
        thread_modes=ThreadModes(uow, journal, system_clock, default_mode),
        memories=Memories(
            uow,
            journal,
            system_clock,
            default_mode=default_mode,
            policy=InsertPolicy(settings.memory.insert_policy),
            allow_self_approval=settings.memory.allow_self_approval,
            extraction=FactExtraction(_extractor(settings)),
        ),
        retrieval=retrieval,
        facts=Facts(uow, system_clock, retrieval),
        foreign=ForeignSources(uow, journal, system_clock),
        audit=Audit(uow),
        feed=feed,
        wakeups=wakeups,
        pool=pool,
        writer=writer,
        poll_interval=settings.events.poll_interval,
    )

    async def admit(method: str, context: grpc.aio.ServicerContext) -> dict[str, str]:
        if settings.internal.tls and settings.internal.gateway_name not in tls.peer_names(
            context.auth_context()
        ):
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="client certificate name")
        ctx = internal_call.read(settings.internal.token, context.invocation_metadata())
        if ctx is None or not ctx.tenant_id:
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="not the gateway")
        CALLER.set(caller_from(ctx))
        return {
            "tenant": ctx.tenant_id,
            "principal": ctx.principal_id,
            "trace_id": ctx.trace_id,
        }

    served = await serving.start(
        listen=listen or settings.runtime.listen,
        credentials=tls.runtime_credentials(settings.internal) if settings.internal.tls else None,
        health_listen=settings.runtime.health_listen,
        register=lambda s: runtime_service_pb2_grpc.add_RuntimeServiceServicer_to_server(
            servicer, s
        ),
        services=[SERVICE],
        guard=CallGuard(
            admit,
            serving.OPEN_PREFIXES,
            max_message_bytes=settings.transport.max_message_bytes,
        ),
        options=transport.server_options(settings.transport),
        grace=settings.runtime.grace,
        reflection_enabled=settings.runtime.reflection,
    )
    compactor = asyncio.create_task(_compact_forever(feed, pool))

    async def close() -> None:
        compactor.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await compactor
        pool.shutdown(wait=True)
        writer.close()
        db.dispose()

    served.on_stop.append(close)
    return served


async def _compact_forever(feed: EventFeed, pool: ThreadPoolExecutor) -> None:
    loop = asyncio.get_running_loop()
    while True:
        try:
            await loop.run_in_executor(pool, feed.compact_expired)
        except Exception:
            log.exception("event compaction failed; will retry")
        await asyncio.sleep(COMPACTION_INTERVAL_S)


def _extractor(settings: Settings) -> Extractor:
    f = settings.facts
    if f.extractor == "openai_compatible":
        from runtime_svc.adapters.llm_extractor import OpenAICompatibleExtractor

        return OpenAICompatibleExtractor(
            endpoint=f.endpoint,
            model=f.model,
            api_key=os.environ.get(f.api_key_env, ""),
            timeout=f.timeout,
        )
    return RuleExtractor()
