"""The runtime's start-up steps that are more than a line: the semantic side (model and
vector store, or why retrieval stays lexical-only), what is held in memory before serving,
and the database's gauges."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.pool import QueuePool

from agentmem_kernel import metrics
from agentmem_kernel.config import Settings
from runtime_svc import retrieval
from runtime_svc.retrieval import HybridSettings, LexicalOnlyReason, Mirrors, Semantic, Weights
from runtime_svc.services.clock import system_clock
from runtime_svc.storage import embedding_outbox, repositories
from runtime_svc.storage.db import Database

log = logging.getLogger("agentmem.runtime")


def semantic_side(settings: Settings, db: Database) -> tuple[Semantic | None, str]:
    """The embedding model and the vector store, or why retrieval stays lexical-only: the
    model's library missing, no vector store (PostgreSQL without pgvector), or no model that
    can be loaded. Each is logged once and reported, never fatal."""
    r = settings.retrieval
    missing = retrieval.missing_library(r)
    if missing is not None:
        return None, missing.reason
    with db.writer.connect() as conn:
        reason = retrieval.vector_store_reason(conn)
        conn.commit()
    if reason:
        log.warning(
            "hybrid retrieval is off, searching by words only: %s (retrieval.embeddings: %s)",
            reason,
            r.embeddings.value,
        )
        return None, LexicalOnlyReason.VECTOR_STORE_UNAVAILABLE
    embedder = retrieval.open_embedder(r)
    if isinstance(embedder, retrieval.Unavailable):
        return None, embedder.reason
    with db.writer.begin() as conn:
        queued = embedding_outbox.backfill(conn, embedder.model_id, system_clock())
    log.info(
        "hybrid retrieval on",
        extra={"model_id": embedder.model_id, "queued_for_embedding": queued},
    )
    weights = Weights(r.lexical_weight, r.semantic_weight)
    return Semantic(
        embedder,
        HybridSettings(
            weights,
            r.candidates,
            r.exact_search_max,
            r.min_similarity,
            r.held_max_vectors,
            r.similarity_margin,
        ),
        r.query_cache,
    ), ""


def warm(db: Database, mirrors: Mirrors, semantic: Semantic | None) -> None:
    """Large tenants' postings held before the runtime serves (see `Mirrors.warm`),
    and with hybrid retrieval their vectors' signatures and vectors (`Semantic.warm`)."""
    started = time.perf_counter()
    with db.reader.connect() as conn:
        tenants = repositories.TenantStateRepository(conn, "").indexed_by_tenant()
    held = mirrors.warm(db.reader.connect, tenants)
    if held:
        log.info(
            "search postings held before serving",
            extra={"postings": held, "seconds": round(time.perf_counter() - started, 1)},
        )
    if semantic is None:
        return
    started = time.perf_counter()
    vectors = semantic.warm(db.reader.connect, tenants, db.writer.dialect.name == "sqlite")
    if vectors:
        log.info(
            "vector signatures held before serving",
            extra={"vectors": vectors, "seconds": round(time.perf_counter() - started, 1)},
        )


def embedding_backlog(db: Database) -> embedding_outbox.Backlog:
    """What waits to be embedded (all tenants)."""
    with db.reader.connect() as conn:
        return embedding_outbox.backlog(conn)


def pool_gauges(db: Database, pool: ThreadPoolExecutor) -> None:
    """Connections in use and capacity per engine, and database work waiting for a worker."""
    for role, engine in (("writer", db.writer), ("reader", db.reader)):
        if role == "reader" and engine is db.writer:
            continue
        p = engine.pool
        if not isinstance(p, QueuePool):  # the engines' pool class (`storage.db`)
            continue
        metrics.GAUGES.add(
            "agentmem_db_pool_in_use", "Database connections checked out.", p.checkedout, role=role
        )
        metrics.GAUGES.add(
            "agentmem_db_pool_capacity",
            "Database connections the pool may open (size + overflow).",
            _capacity(p),
            role=role,
        )
    metrics.GAUGES.add(
        "agentmem_db_work_waiting",
        "Database reads queued for a free worker thread (runtime.workers).",
        pool._work_queue.qsize,
    )


def _capacity(pool: QueuePool) -> Callable[[], float]:
    """Connections the pool may open: its size and overflow (negative: unlimited, counted 0)."""
    return lambda: pool.size() + max(int(getattr(pool, "_max_overflow", 0)), 0)
