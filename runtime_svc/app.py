"""Assembles the memory runtime from its settings and starts its gRPC server.

`start` runs the steps in order: check the settings, open and migrate the database, the
semantic side, what is held in memory, the unit of work and its writer, the embedding
indexer, the use cases and servicer, the server, then the background work; `close` undoes
them in reverse."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import grpc
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter

from agentmem.contract import rpcs
from agentmem.v1 import memory_service_pb2_grpc
from agentmem_kernel import metrics, paging, serving, tls, tracing, transport
from agentmem_kernel.config import Settings
from agentmem_kernel.guard import CallGuard
from runtime_svc import startup
from runtime_svc.adapters import tokenizers
from runtime_svc.admission import admission
from runtime_svc.composition import Assembled, Storage, assemble, unit_of_work
from runtime_svc.grpc.servicer import RuntimeServicer
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.retrieval import EmbeddingIndexer, LexicalOnlyReason, Mirrors, Semantic
from runtime_svc.services.clock import system_clock
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.storage import migrate
from runtime_svc.storage.db import Database, UnsupportedSQLite, open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork
from runtime_svc.storage.wal_checkpoints import WalCheckpointer

log = logging.getLogger("agentmem.runtime")
# The public service, served on the internal port to the gateway only.
SERVICE = rpcs.SERVICE.full_name
COMPACTION_INTERVAL_S = 60.0


@dataclass(kw_only=True)
class RuntimeServed(serving.Served):
    """The served runtime; its servicer and held postings are reachable for in-process
    tests."""

    servicer: RuntimeServicer
    mirrors: Mirrors


async def start(
    settings: Settings, *, listen: str | None = None, span_exporter: SpanExporter | None = None
) -> RuntimeServed:
    """`span_exporter` receives this process's spans as well (tests use an in-memory one)."""
    _check(settings)
    paging.configure(settings.internal.token)
    db = _open_database(settings)
    tracer_provider = tracing.provider(settings.tracing, "agentmem-runtime", span_exporter)
    for engine in {db.writer, db.reader}:
        tracing.instrument_engine(engine, tracer_provider)
    loop = asyncio.get_running_loop()
    pool = tracing.ContextExecutor(settings.runtime.workers, thread_name_prefix="runtime-db")
    startup.pool_gauges(db, pool)
    # The prompt tokenizer's encoding is built (a second or two) while the model loads.
    counting = loop.run_in_executor(None, tokenizers.counter, settings.retrieval.tokenizer)
    semantic, lexical_only_reason = None, LexicalOnlyReason.DISABLED
    if settings.retrieval.enabled:
        semantic, lexical_only_reason = await loop.run_in_executor(
            None, startup.semantic_side, settings, db
        )
    counter = await counting
    if counter.fallback:
        log.warning(
            "prompt budgets counted in words",
            extra={"tokenizer": settings.retrieval.tokenizer, "reason": counter.fallback},
        )
    mirrors = Mirrors(settings.search.held_min_entries, settings.search.held_max_postings)
    if settings.search.warm_on_start:
        await loop.run_in_executor(None, startup.warm, db, mirrors, semantic)
    indexer: EmbeddingIndexer | None = None

    def vectors_queued() -> None:
        if indexer is not None:
            indexer.wake()

    checkpoints = WalCheckpointer(db) if db.dialect == "sqlite" else None
    uow = _unit_of_work(
        settings,
        db,
        mirrors,
        vectors_queued if semantic else None,
        checkpoints.committed if checkpoints else None,
    )
    writer = GroupCommitter(uow, settings.runtime.group_commit)
    if semantic is not None:
        indexer = _start_indexer(settings, db, uow, writer, semantic)
    guard = CallGuard(
        admission(settings),
        serving.OPEN_PREFIXES,
        max_message_bytes=settings.transport.max_message_bytes,
        max_metadata_bytes=settings.transport.max_metadata_bytes,
    )
    parts = assemble(
        settings,
        Storage(uow, writer, pool, mirrors),
        semantic=semantic,
        lexical_only_reason=lexical_only_reason,
        counter=counter,
        wakeups=TenantWakeups(loop),
        alone=lambda: guard.in_flight <= 1,
    )
    served = await _serve(settings, parts.servicer, guard, listen, tracer_provider)
    runtime = RuntimeServed(**vars(served), servicer=parts.servicer, mirrors=mirrors)
    compactor = _start_background(parts, pool, mirrors, db, semantic)

    async def close() -> None:
        compactor.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await compactor
        if indexer is not None:
            await loop.run_in_executor(None, indexer.stop)
        if semantic is not None:
            semantic.close()
        pool.shutdown(wait=True)
        writer.close()
        await loop.run_in_executor(None, parts.finisher.stop)
        uow.close()
        if checkpoints is not None:
            await loop.run_in_executor(None, checkpoints.close)
        db.dispose()
        if tracer_provider is not None:
            tracer_provider.shutdown()

    runtime.on_stop.append(close)
    return runtime


def _check(settings: Settings) -> None:
    if not settings.internal.token:
        raise SystemExit(
            "internal.token is not set (AGENTMEM_INTERNAL__TOKEN): the runtime "
            "accepts calls from the gateway only"
        )


def _open_database(settings: Settings) -> Database:
    """The database, migrated to the newest schema."""
    try:
        db = open_database(
            settings.storage, vectors=settings.retrieval.enabled, checkpoints_apart=True
        )
    except UnsupportedSQLite as e:
        raise SystemExit(f"agentmem runtime: {e}") from None
    migrate.upgrade(db.writer)
    return db


def _unit_of_work(
    settings: Settings,
    db: Database,
    mirrors: Mirrors,
    vectors_queued: Callable[[], None] | None,
    committed: Callable[[], None] | None,
) -> UnitOfWork:
    uow = unit_of_work(settings, db, mirrors, vectors_queued, committed)
    uow.keep_reader()  # on the event loop's thread
    return uow


def _start_indexer(
    settings: Settings,
    db: Database,
    uow: UnitOfWork,
    writer: GroupCommitter,
    semantic: Semantic,
) -> EmbeddingIndexer:
    """Sources embedded in the background, between writes; their backlog is a gauge."""
    indexer = EmbeddingIndexer(
        db,
        uow,
        semantic.embedder,
        system_clock,
        settings.retrieval.batch_size,
        writes_idle_for=writer.idle_for,
    )
    indexer.start()
    metrics.GAUGES.add(
        "agentmem_embedding_backlog",
        "Sources waiting to be embedded (all tenants); they are ranked by words until then.",
        lambda: startup.embedding_backlog(db).pending,
    )
    metrics.GAUGES.add(
        "agentmem_embedding_lag_seconds",
        "How long the oldest source waiting to be embedded has waited (all tenants).",
        lambda: startup.embedding_backlog(db).lag_s(system_clock()),
    )
    metrics.GAUGES.add(
        "agentmem_embedding_set_aside",
        "Sources set aside after their embedding failed repeatedly (tried again hourly).",
        lambda: startup.embedding_backlog(db).set_aside,
    )
    return indexer


async def _serve(
    settings: Settings,
    servicer: RuntimeServicer,
    guard: CallGuard,
    listen: str | None,
    tracer_provider: TracerProvider | None,
) -> serving.Served:
    def register(server: grpc.aio.Server) -> None:
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server(servicer, server)

    return await serving.start(
        listen=listen or settings.runtime.listen,
        credentials=tls.runtime_credentials(settings.internal) if settings.internal.tls else None,
        health_listen=settings.runtime.health_listen,
        register=register,
        services=[SERVICE],
        guard=guard,
        options=transport.server_options(settings.transport),
        grace=settings.runtime.grace,
        reflection_enabled=settings.runtime.reflection,
        metrics_listen=settings.runtime.metrics_listen,
        interceptors=tracing.server_interceptors(tracer_provider),
    )


def _start_background(
    parts: Assembled,
    pool: ThreadPoolExecutor,
    mirrors: Mirrors,
    db: Database,
    semantic: Semantic | None,
) -> asyncio.Task[None]:
    """Compaction, and erasures a crash left pending (finished first); the compactor's task
    is returned for `close` to cancel."""
    sweeps: list[Callable[[], None]] = [
        partial(mirrors.sweep, db.reader.connect),
        parts.finisher.forget_erased_elsewhere,
    ]
    if semantic is not None:
        sweeps.append(partial(semantic.sweep, db.reader.connect))
    compactor = asyncio.create_task(_compact_forever(parts.feed, pool, sweeps))
    parts.finisher.start()
    metrics.GAUGES.add(
        "agentmem_erasures_pending",
        "Erased sources whose bytes may still be in the database's files (SQLite: a reader "
        "holds an older snapshot; PostgreSQL: the VACUUM has not finished).",
        parts.finisher.pending,
    )
    return compactor


async def _compact_forever(
    feed: EventFeed, pool: ThreadPoolExecutor, sweeps: list[Callable[[], None]]
) -> None:
    """Every minute: expired events compacted away, and what this process holds in memory
    brought up to date with what other processes wrote (`sweeps`: the postings and vectors
    held, whose removed words and vectors leave this one's memory too, and the caches of
    what memories' texts hold, emptied after an erasure made elsewhere)."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            await loop.run_in_executor(pool, feed.compact_expired)
        except Exception:
            log.exception("event compaction failed; will retry")
        for sweep in sweeps:
            try:
                await loop.run_in_executor(pool, sweep)
            except Exception:
                log.exception("bringing what is held in memory up to date failed; will retry")
        await asyncio.sleep(COMPACTION_INTERVAL_S)
