"""Assembles the memory runtime from its settings and starts its gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
from opentelemetry.sdk.trace.export import SpanExporter

from agentmem.core import internal_call, metrics, paging, serving, tls, tracing, transport
from agentmem.core.config import Settings
from agentmem.core.errors import AgentmemError, Reason
from agentmem.core.guard import CallGuard
from agentmem.runtime.v1 import runtime_service_pb2, runtime_service_pb2_grpc
from runtime_svc.adapters import embedders, tokenizers
from runtime_svc.domain.extraction import RuleExtractor
from runtime_svc.domain.facts import Extractor
from runtime_svc.domain.fusion import Weights
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.passages import Window
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc.servicer import CALLER, RuntimeServicer, caller_from
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.search import vector_sql
from runtime_svc.search.mirrors import Mirrors
from runtime_svc.services.audit import Audit
from runtime_svc.services.clock import system_clock
from runtime_svc.services.embedding_indexer import EmbeddingIndexer
from runtime_svc.services.erasure_finisher import ErasureFinisher
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.fact_retraction import FactRetraction
from runtime_svc.services.facts import FactExtraction, Facts
from runtime_svc.services.foreign import ForeignSources
from runtime_svc.services.inserts import Inserts
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.semantic import HybridSettings, Semantic
from runtime_svc.services.source_changes import SourceChanges
from runtime_svc.services.source_lifecycle import SourceLifecycle
from runtime_svc.services.source_reads import SourceReads
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage import migrate, repositories, vectors
from runtime_svc.storage.db import Database, open_database
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork

log = logging.getLogger("agentmem.runtime")
SERVICE = runtime_service_pb2.DESCRIPTOR.services_by_name["RuntimeService"].full_name
COMPACTION_INTERVAL_S = 60.0


async def start(
    settings: Settings, *, listen: str | None = None, span_exporter: SpanExporter | None = None
) -> serving.Served:
    """`span_exporter` receives this process's spans as well (tests use an in-memory one)."""
    if not settings.internal.token:
        raise SystemExit(
            "internal.token is not set (AGENTMEM_INTERNAL__TOKEN): the runtime "
            "accepts calls from the gateway only"
        )
    paging.configure(settings.internal.token)
    db = open_database(settings.storage, vectors=settings.retrieval.enabled)
    migrate.upgrade(db.writer)
    tracer_provider = tracing.provider(settings.tracing, "agentmem-runtime", span_exporter)
    for engine in {db.writer, db.reader}:
        tracing.instrument_engine(engine, tracer_provider)
    loop = asyncio.get_running_loop()
    pool = tracing.ContextExecutor(settings.runtime.workers, thread_name_prefix="runtime-db")
    _pool_gauges(db, pool)
    wakeups = TenantWakeups(loop)
    # The prompt tokenizer's encoding is built (a second or two) while the model loads.
    counting = loop.run_in_executor(None, tokenizers.counter, settings.retrieval.tokenizer)
    semantic, lexical_only_reason = None, embedders.Reason.DISABLED
    if settings.retrieval.enabled:
        semantic, lexical_only_reason = await loop.run_in_executor(
            None, _semantic_side, settings, db
        )
    counter = await counting
    if counter.fallback:
        log.warning(
            "prompt budgets counted in words",
            extra={"tokenizer": settings.retrieval.tokenizer, "reason": counter.fallback},
        )
    indexer: EmbeddingIndexer | None = None
    passages = settings.retrieval.passages
    mirrors = Mirrors(settings.search.held_min_entries, settings.search.held_max_postings)
    if settings.search.warm_on_start:
        await loop.run_in_executor(None, _warm, db, mirrors, semantic)
    uow = UnitOfWork(
        db,
        vectors_queued=(lambda: indexer.wake() if indexer else None) if semantic else None,
        window=Window(passages.before, passages.date, passages.reply),
        words_removed=mirrors.forget_words,
        busy_timeout_ms=settings.storage.busy_timeout_ms,
    )
    uow.keep_reader()  # on the event loop's thread
    writer = GroupCommitter(uow, settings.runtime.group_commit)
    if semantic is not None:
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
            lambda: _embedding_backlog(db),
        )
    journal = Journal(EventRetention(settings.events.max_events_per_tenant), wakeups.notify)
    feed = EventFeed(uow, system_clock, settings.events.retention)
    default_mode = Mode(settings.memory.default_thread_mode)
    retrieval = Retrieval(
        uow,
        system_clock,
        default_mode=default_mode,
        posting_budget=settings.search.posting_budget,
        semantic=semantic,
        lexical_only_reason=lexical_only_reason,
        mirrors=mirrors,
        count_tokens=counter.count,
        tokenizer=counter.name,
    )
    extraction = FactExtraction(_extractor(settings))
    finisher = ErasureFinisher(uow, journal, system_clock)
    changes = SourceChanges(uow, journal, extraction, finisher.after_erasure)
    servicer = RuntimeServicer(
        thread_modes=ThreadModes(uow, journal, system_clock, default_mode),
        inserts=Inserts(
            uow,
            journal,
            system_clock,
            changes,
            default_mode=default_mode,
            policy=InsertPolicy(settings.memory.insert_policy),
            extraction=extraction,
            quotas=StoredQuotas(settings.limits),
        ),
        reads=SourceReads(uow, system_clock),
        lifecycle=SourceLifecycle(
            uow,
            journal,
            system_clock,
            changes,
            extraction,
            allow_self_approval=settings.memory.allow_self_approval,
        ),
        retrieval=retrieval,
        facts=Facts(uow, system_clock, retrieval),
        retraction=FactRetraction(uow, journal, system_clock),
        foreign=ForeignSources(uow, journal, system_clock, changes),
        audit=Audit(uow),
        feed=feed,
        wakeups=wakeups,
        pool=pool,
        writer=writer,
        poll_interval=settings.events.poll_interval,
        alone=lambda: guard.in_flight <= 1,
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

    guard = CallGuard(
        admit,
        serving.OPEN_PREFIXES,
        max_message_bytes=settings.transport.max_message_bytes,
        max_metadata_bytes=settings.transport.max_metadata_bytes,
    )
    served = await serving.start(
        listen=listen or settings.runtime.listen,
        credentials=tls.runtime_credentials(settings.internal) if settings.internal.tls else None,
        health_listen=settings.runtime.health_listen,
        register=lambda s: runtime_service_pb2_grpc.add_RuntimeServiceServicer_to_server(
            servicer, s
        ),
        services=[SERVICE],
        guard=guard,
        options=transport.server_options(settings.transport),
        grace=settings.runtime.grace,
        reflection_enabled=settings.runtime.reflection,
        metrics_listen=settings.runtime.metrics_listen,
        interceptors=tracing.server_interceptors(tracer_provider),
    )
    served.servicer = servicer  # type: ignore[attr-defined]  # for in-process tests
    served.mirrors = mirrors  # type: ignore[attr-defined]  # for in-process tests
    compactor = asyncio.create_task(_compact_forever(feed, pool, mirrors, db))
    finisher.start()  # erasures a crash left pending are finished first
    metrics.GAUGES.add(
        "agentmem_erasures_pending",
        "Erased sources whose bytes may still be in the database's files (SQLite: a reader "
        "holds an older snapshot; PostgreSQL: the VACUUM has not finished).",
        finisher.pending,
    )

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
        await loop.run_in_executor(None, finisher.stop)
        uow.close()
        db.dispose()
        if tracer_provider is not None:
            tracer_provider.shutdown()

    served.on_stop.append(close)
    return served


def _embedding_backlog(db) -> int:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        return vectors.pending(conn)


def _pool_gauges(db, pool: ThreadPoolExecutor) -> None:  # type: ignore[no-untyped-def]
    """Connections in use and capacity per engine, and database work waiting for a worker."""
    for role, engine in (("writer", db.writer), ("reader", db.reader)):
        if role == "reader" and engine is db.writer:
            continue
        p = engine.pool
        metrics.GAUGES.add(
            "agentmem_db_pool_in_use", "Database connections checked out.", p.checkedout, role=role
        )
        metrics.GAUGES.add(
            "agentmem_db_pool_capacity",
            "Database connections the pool may open (size + overflow).",
            lambda p=p: p.size() + max(getattr(p, "_max_overflow", 0), 0),
            role=role,
        )
    metrics.GAUGES.add(
        "agentmem_db_work_waiting",
        "Database reads queued for a free worker thread (runtime.workers).",
        pool._work_queue.qsize,
    )


async def _compact_forever(
    feed: EventFeed, pool: ThreadPoolExecutor, mirrors: Mirrors, db: Database
) -> None:
    """Every minute: expired events compacted away, and the postings held brought up to
    date (words another runtime's erasure removed leave this one's memory too)."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            await loop.run_in_executor(pool, feed.compact_expired)
        except Exception:
            log.exception("event compaction failed; will retry")
        try:
            await loop.run_in_executor(pool, mirrors.sweep, db.reader.connect)
        except Exception:
            log.exception("bringing held postings up to date failed; will retry")
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


def _warm(db: Database, mirrors: Mirrors, semantic: Semantic | None) -> None:
    """Large tenants' postings held before the runtime serves (see `Mirrors.warm`),
    and with hybrid retrieval on SQLite their vectors' signatures and vectors
    (`Semantic.warm`)."""
    started = time.perf_counter()
    with db.reader.connect() as conn:
        tenants = repositories.TenantStateRepository(conn, "").indexed_by_tenant()
    held = mirrors.warm(db.reader.connect, tenants)
    if held:
        log.info(
            "search postings held before serving",
            extra={"postings": held, "seconds": round(time.perf_counter() - started, 1)},
        )
    if semantic is None or db.writer.dialect.name != "sqlite":
        return
    started = time.perf_counter()
    vectors = semantic.warm(db.reader.connect, tenants)
    if vectors:
        log.info(
            "vector signatures held before serving",
            extra={"vectors": vectors, "seconds": round(time.perf_counter() - started, 1)},
        )


def _semantic_side(settings: Settings, db: Database) -> tuple[Semantic | None, str]:
    """The embedding model and the vector store, or why retrieval stays lexical-only: the
    model's library missing, no vector store (PostgreSQL without pgvector), or no model that
    can be loaded. Each is logged once and reported, never fatal."""
    r = settings.retrieval
    missing = embedders.missing_library(r)
    if missing is not None:
        return None, missing.reason
    with db.writer.connect() as conn:
        reason = vector_sql.unavailable_reason(conn)
        conn.commit()
    if reason:
        log.warning(
            "hybrid retrieval is off, searching by words only: %s (retrieval.embeddings: %s)",
            reason,
            r.embeddings.value,
        )
        return None, embedders.Reason.VECTOR_STORE_UNAVAILABLE
    embedder = embedders.open_embedder(r)
    if isinstance(embedder, embedders.Unavailable):
        return None, embedder.reason
    with db.writer.begin() as conn:
        queued = vectors.backfill(conn, embedder.model_id, system_clock())
    log.info(
        "hybrid retrieval on",
        extra={"model_id": embedder.model_id, "queued_for_embedding": queued},
    )
    weights = Weights(r.lexical_weight, r.semantic_weight)
    return Semantic(
        embedder,
        HybridSettings(
            weights, r.candidates, r.exact_search_max, r.min_similarity, r.held_max_vectors
        ),
        r.query_cache,
    ), ""
