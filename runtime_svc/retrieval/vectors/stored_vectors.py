"""Entries' vectors as stored, looked up by entry (the lexical side's candidates, whose
cosine counts in the fusion even when the semantic side did not return them)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from sqlalchemy import Connection, Select, and_, bindparam, func, select

from runtime_svc.retrieval.embedders.model import Vector
from runtime_svc.retrieval.indexer.vector_store import sent_form
from runtime_svc.retrieval.vectors.signature_rows import packed_vectors, unpacked
from runtime_svc.retrieval.vectors.vector_memory import cosine
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.read_rows import driver_rows, one_of

v = MemoryVectorRow.__table__
EntryRef = tuple[int, int]  # (source pk, passage: the entry key's low bits)


class Stored:
    """Entries' vectors as stored (float32 bytes on SQLite, float32 rows on PostgreSQL)."""

    def __init__(self, by_entry: dict[EntryRef, Any]) -> None:
        self._by_entry = by_entry

    def similarity(
        self, query: Vector, entries: Sequence[EntryRef] | None = None
    ) -> dict[EntryRef, float]:
        """Cosine similarity to `query` of the given entries (default: all) that have a
        vector, in float32 as the database computes it."""
        keys = [k for k in (self._by_entry if entries is None else entries) if k in self._by_entry]
        if not keys:
            return {}
        rows = [self._by_entry[k] for k in keys]
        matrix = (
            np.frombuffer(b"".join(rows), np.float32).reshape(len(rows), -1)
            if isinstance(rows[0], bytes | bytearray | memoryview)
            else np.asarray(rows, np.float32)
        )
        return {k: float(c) for k, c in zip(keys, cosine(matrix, query).tolist(), strict=True)}


@lru_cache(maxsize=1)
def _stored_statement() -> Select[Any]:
    """SQLite: the vectors of the entries given as a JSON array of [source pk, passage]
    pairs, each looked up by its key (the tenant check as an expression, so that SQLite does
    not walk the tenant's vectors instead)."""
    wanted = func.json_each(bindparam("entries")).table_valued("value").alias("wanted")
    return (
        select(v.c.source_pk, v.c.passage, v.c.embedding)
        .select_from(wanted)
        .join(
            v,
            and_(
                v.c.source_pk == func.json_extract(wanted.c.value, "$[0]"),
                v.c.passage == func.json_extract(wanted.c.value, "$[1]"),
                v.c.model_id == bindparam("model_id"),
            ),
        )
        .where(func.coalesce(v.c.tenant_id, "") == bindparam("tenant_id"))
    )


def lookup(conn: Connection, tenant_id: str, model_id: str, entries: Sequence[EntryRef]) -> Stored:
    """The stored vectors of the given entries (those that have one)."""
    if not entries:
        return Stored({})
    if conn.dialect.name == "sqlite":
        params: dict[str, object] = {
            "entries": json.dumps(list(entries)),
            "model_id": model_id,
            "tenant_id": tenant_id,
        }
        rows = driver_rows(conn, _stored_statement(), params)
        return Stored({(pk, p): e for pk, p, e in rows})
    pks = sorted({pk for pk, _ in entries})
    passages = sorted({p for _, p in entries})
    wanted_rows = {"pks": pks, "passages": passages, "model_id": model_id, "tenant_id": tenant_id}
    rows = driver_rows(conn, _pg_stored_statement(), wanted_rows)
    wanted = set(entries)
    rows = [r for r in rows if (r[0], r[1]) in wanted]
    vectors = packed_vectors([r[2] for r in rows]) if rows else None
    if vectors is None:  # not all of one dimension
        return Stored({(pk, p): unpacked(e) for pk, p, e in rows})
    return Stored({(r[0], r[1]): vec for r, vec in zip(rows, vectors, strict=True)})


@lru_cache(maxsize=1)
def _pg_stored_statement() -> Select[Any]:
    """PostgreSQL: the vectors of some entries' sources and passages (a superset of the
    entries, looked up in the entry's unique index), each in pgvector's binary form: a
    fraction of the stored array's text to send and to parse."""
    return select(v.c.source_pk, v.c.passage, sent_form(v.c.embedding)).where(
        one_of(v.c.source_pk, "pks", "postgresql"),
        one_of(v.c.passage, "passages", "postgresql"),
        v.c.model_id == bindparam("model_id"),
        v.c.tenant_id == bindparam("tenant_id"),
    )
