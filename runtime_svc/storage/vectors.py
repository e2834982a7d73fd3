"""Vectors as a derived record kind, and the outbox that feeds the background indexer.

A derived record kind answers three questions by source: which records exist
(`find_by_source`), remove them (`purge`, in the caller's transaction) and report them
(`readback`). A vector's id is `<source_id>#vector:<model_id>`. Purging a source also drops
its place in the outbox, so a revoked or erased source is never embedded afterwards.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import BigInteger, Connection, delete, func, insert, literal, select

from runtime_svc.domain.embeddings import Vector, signature
from runtime_svc.storage import compiled
from runtime_svc.storage.models import MemoryVectorRow, VectorOutboxRow
from runtime_svc.storage.sources import sources

memory_vectors = MemoryVectorRow.__table__
vector_outbox = VectorOutboxRow.__table__
_ENQUEUE = insert(vector_outbox)
KIND = "vector"


def vector_id(source_id: str, model_id: str) -> str:
    return f"{source_id}#{KIND}:{model_id}"


def find_by_source(conn: Connection, tenant_id: str, source_id: str) -> list[str]:
    """The ids of the source's vectors (any model)."""
    rows = conn.execute(
        select(memory_vectors.c.model_id)
        .where(memory_vectors.c.tenant_id == tenant_id, memory_vectors.c.source_id == source_id)
        .order_by(memory_vectors.c.model_id)
    ).scalars()
    return [vector_id(source_id, m) for m in rows]


def purge(conn: Connection, tenant_id: str, source_id: str) -> int:
    """Deletes the source's vectors and its place in the outbox; returns how many vectors."""
    conn.execute(
        delete(vector_outbox).where(
            vector_outbox.c.tenant_id == tenant_id, vector_outbox.c.source_id == source_id
        )
    )
    return conn.execute(
        delete(memory_vectors).where(
            memory_vectors.c.tenant_id == tenant_id, memory_vectors.c.source_id == source_id
        )
    ).rowcount


def readback(conn: Connection, tenant_id: str, source_id: str) -> list[tuple[str, str]]:
    """(kind, id) of every stored vector of the source."""
    return [(KIND, vid) for vid in find_by_source(conn, tenant_id, source_id)]


class VectorOutbox:
    """Queues a source for embedding in the transaction that makes it indexable; `wake` runs
    once that transaction committed. Disabled (no rows) while retrieval.embeddings is none:
    turning embeddings on later fills the outbox from the sources (`backfill`)."""

    def __init__(
        self, conn: Connection, tenant_id: str, on_enqueue: Callable[[], None] | None
    ) -> None:
        self.conn, self.tenant_id = conn, tenant_id
        self._on_enqueue = on_enqueue

    def enqueue(self, source_pk: int, source_id: str) -> None:
        if self._on_enqueue is None:
            return
        compiled.execute(  # on every insert: a statement compiled once
            self.conn,
            _ENQUEUE,
            {
                "tenant_id": self.tenant_id,
                "source_pk": source_pk,
                "source_id": source_id,
                "enqueued_at_us": time.time_ns() // 1000,
            },
        )
        self._on_enqueue()


def backfill(conn: Connection, model_id: str, now_us: int) -> int:
    """Queues every source that has an index entry and no vector of `model_id` (turning
    embeddings on, or changing the model), in source order; returns how many."""
    have = select(memory_vectors.c.source_pk).where(
        memory_vectors.c.source_pk == sources.c.pk, memory_vectors.c.model_id == model_id
    )
    queued = select(vector_outbox.c.seq).where(vector_outbox.c.source_pk == sources.c.pk)
    missing = (
        select(
            sources.c.tenant_id,
            sources.c.pk,
            sources.c.source_id,
            literal(now_us, BigInteger),
        )
        .where(sources.c.indexed_revision > 0, ~have.exists(), ~queued.exists())
        .order_by(sources.c.pk)
    )
    return conn.execute(
        insert(vector_outbox).from_select(
            ["tenant_id", "source_pk", "source_id", "enqueued_at_us"], missing
        )
    ).rowcount


def pending(conn: Connection, tenant_id: str | None = None) -> int:
    stmt = select(func.count()).select_from(vector_outbox)
    if tenant_id is not None:
        stmt = stmt.where(vector_outbox.c.tenant_id == tenant_id)
    return conn.execute(stmt).scalar_one()


@dataclass(frozen=True)
class Queued:
    seq: int
    tenant_id: str
    source_pk: int
    source_id: str
    text: str  # the generated form; empty when it was purged


def take(conn: Connection, limit: int) -> list[Queued]:
    """The oldest queued sources with their text, in commit order."""
    stmt = (
        select(
            vector_outbox.c.seq,
            vector_outbox.c.tenant_id,
            vector_outbox.c.source_pk,
            vector_outbox.c.source_id,
            func.coalesce(sources.c.generated_form, ""),
        )
        .select_from(vector_outbox.outerjoin(sources, sources.c.pk == vector_outbox.c.source_pk))
        .order_by(vector_outbox.c.seq)
        .limit(limit)
    )
    return [Queued(*r) for r in conn.execute(stmt)]


def store(conn: Connection, item: Queued, model_id: str, vector: Vector, now_us: int) -> bool:
    """Stores the vector if the source is still queued and still has its text (a purge in
    between wins), replacing the source's vectors of other models; dequeues it either way.
    Returns whether a vector was stored."""
    still_queued = conn.execute(
        delete(vector_outbox).where(vector_outbox.c.seq == item.seq)
    ).rowcount
    row = conn.execute(
        select(sources.c.revision, sources.c.generated_form, sources.c.indexed_revision).where(
            sources.c.pk == item.source_pk, sources.c.tenant_id == item.tenant_id
        )
    ).one_or_none()
    if not still_queued or row is None or not row.generated_form or not row.indexed_revision:
        return False
    conn.execute(delete(memory_vectors).where(memory_vectors.c.source_pk == item.source_pk))
    conn.execute(
        insert(memory_vectors).values(
            source_pk=item.source_pk,
            model_id=model_id,
            tenant_id=item.tenant_id,
            source_id=item.source_id,
            source_revision=row.revision,
            dimension=len(vector),
            embedding=encode(conn, vector),
            signature=signature(vector),
            created_at_us=now_us,
        )
    )
    return True


def drop(conn: Connection, item: Queued) -> None:
    """Dequeues a source that cannot be embedded (no text)."""
    conn.execute(delete(vector_outbox).where(vector_outbox.c.seq == item.seq))


def encode(conn: Connection, vector: Sequence[float]) -> object:
    """float32 bytes on SQLite (sqlite-vec's format), a real[] on PostgreSQL."""
    if conn.dialect.name == "sqlite":
        return array("f", vector).tobytes()
    return [float(x) for x in vector]
