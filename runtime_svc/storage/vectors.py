"""Vectors as a derived record kind: found, purged and read back by source, and the tenant's
turn to store them.

A vector is derived from one search index entry: a whole-text memory has one, a
conversation one per passage (the passage's text as the lexical side indexes it, see
`runtime_svc.domain.passages`); `passage` holds the entry key's low bits (0: whole text).
The background indexer makes and stores them (`runtime_svc.retrieval.indexer`).

A derived record kind answers three questions by source: which records exist
(`find_by_source`), remove them (`purge`, in the caller's transaction) and report them
(`readback`). A vector's id is `<source_id>#vector:<model_id>[:<first>-<last message>]`.
Purging a source also drops its place in the outbox (a revoked source is never embedded).
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import Connection, Table, delete, select, text

from runtime_svc.domain import entry_keys
from runtime_svc.storage import embedding_outbox
from runtime_svc.storage.models import MemoryVectorRow

memory_vectors = cast(Table, MemoryVectorRow.__table__)
KIND = "vector"


def vector_id(source_id: str, model_id: str, passage: int = 0) -> str:
    rng = entry_keys.range_of(passage)
    return f"{source_id}#{KIND}:{model_id}{f':{rng.start}-{rng.end}' if rng else ''}"


def find_by_source(conn: Connection, tenant_id: str, source_id: str) -> list[str]:
    """The ids of the source's vectors (any model, every passage)."""
    v = memory_vectors.c
    rows = conn.execute(
        select(v.model_id, v.passage)
        .where(v.tenant_id == tenant_id, v.source_id == source_id)
        .order_by(v.model_id, v.passage)
    ).all()
    return [vector_id(source_id, m, p) for m, p in rows]


def purge(conn: Connection, tenant_id: str, source_id: str) -> int:
    """Deletes the source's vectors and its place in the outbox; returns how many vectors.
    On PostgreSQL it takes the tenant's store turn first, as an indexer storing vectors does
    (`store_many`): whichever comes second waits for the other to commit before it touches a
    row, so a group commit purging several tenants' sources never holds a row the indexer
    waits for while waiting for one the indexer holds; and the vectors' delete sees what the
    indexer stored."""
    store_turn(conn, tenant_id)
    embedding_outbox.drop(conn, tenant_id, source_id)
    return conn.execute(
        delete(memory_vectors).where(
            memory_vectors.c.tenant_id == tenant_id, memory_vectors.c.source_id == source_id
        )
    ).rowcount


def readback(conn: Connection, tenant_id: str, source_id: str) -> list[tuple[str, str]]:
    """(kind, id) of every stored vector of the source."""
    return [(KIND, vid) for vid in find_by_source(conn, tenant_id, source_id)]


# PostgreSQL: one store of a tenant's vectors at a time, whichever runtime's indexer runs
# it (an advisory lock held to the end of the transaction; inserts do not take it).
_STORE_TURN = text("SELECT pg_advisory_xact_lock(:space, hashtext(:tenant_id))")
_STORE_SPACE = 0x766563  # the lock's key space: "vec"


def store_turn(conn: Connection, tenant_id: str) -> None:
    """Waits for the tenant's vector store turn (PostgreSQL; SQLite's write turn is one
    already). A vector's seq is taken from a sequence as it is inserted: two runtimes'
    stores of one tenant interleaved could commit a smaller seq after a larger one, which a
    runtime's held rows, brought up to date by seq (`retrieval.vectors.signatures`), would miss."""
    if conn.dialect.name == "postgresql":
        conn.execute(_STORE_TURN, {"space": _STORE_SPACE, "tenant_id": tenant_id})
