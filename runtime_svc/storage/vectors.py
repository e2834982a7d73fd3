"""Vectors as a derived record kind, and the outbox that feeds the background indexer.

A vector is derived from one search index entry: a whole-text memory has one, a
conversation one per passage (the passage's text as the lexical side indexes it, see
`runtime_svc.domain.passages`); `passage` holds the entry key's low bits (0: whole text).

A derived record kind answers three questions by source: which records exist
(`find_by_source`), remove them (`purge`, in the caller's transaction) and report them
(`readback`). A vector's id is `<source_id>#vector:<model_id>[:<first>-<last message>]`.
Purging a source also drops its place in the outbox (a revoked source is never embedded).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Connection,
    Table,
    delete,
    func,
    insert,
    literal,
    select,
    text,
    union_all,
)
from sqlalchemy import cast as sql_cast

from runtime_svc.domain import entry_keys, passages
from runtime_svc.domain.embeddings import Vector, signature
from runtime_svc.domain.passages import Window
from runtime_svc.domain.sources import Body, SourceKind
from runtime_svc.storage import compiled, turn_log, vector_growth
from runtime_svc.storage.models import MemoryVectorRow, SearchPosting, VectorOutboxRow
from runtime_svc.storage.pending_rows import PendingRows
from runtime_svc.storage.source_rows import sources

memory_vectors = cast(Table, MemoryVectorRow.__table__)
vector_outbox = cast(Table, VectorOutboxRow.__table__)
_ENQUEUE = insert(vector_outbox)
postings = cast(Table, SearchPosting.__table__)
KIND = "vector"
KEY_LOOKUPS = 100  # sources whose index entries one statement looks up


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
    turning embeddings on later fills the outbox from the sources (`backfill`).

    In a group commit (`rows`), the places of all its mutations are written in one statement
    as it commits: queueing costs an insert no statement of its own (on PostgreSQL, no round
    trip in the writer thread that every other write waits behind)."""

    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        on_enqueue: Callable[[], None] | None,
        rows: PendingRows | None = None,
    ) -> None:
        self.conn, self.tenant_id = conn, tenant_id
        self._on_enqueue = on_enqueue
        self._rows = rows

    def enqueue(self, source_pk: int, source_id: str) -> None:
        if self._on_enqueue is None:
            return
        row = {
            "tenant_id": self.tenant_id,
            "source_pk": source_pk,
            "source_id": source_id,
            "enqueued_at_us": time.time_ns() // 1000,
        }
        if self._rows is not None:
            self._rows.add(row)
        else:
            compiled.execute(self.conn, _ENQUEUE, row)  # a statement compiled once
        self._on_enqueue()

    def purge(self, source_id: str) -> int:
        """`purge` in this transaction, once every place queued before it is written."""
        if self._rows is not None:
            self._rows.flush()
        return purge(self.conn, self.tenant_id, source_id)


def pending_rows(conn: Connection) -> PendingRows:
    """The outbox rows of a group commit, written as it commits (`VectorOutbox`)."""
    return PendingRows(conn, _ENQUEUE)


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
class Entry:
    passage: int  # the index entry key's low bits (0: the whole text)
    text: str


@dataclass(frozen=True)
class Queued:
    seq: int
    tenant_id: str
    source_pk: int
    source_id: str
    # The source's index entries with the text each was indexed from; none when it has no
    # text any more (purged) or no index entry.
    entries: tuple[Entry, ...]

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.entries]


def take(conn: Connection, limit: int, window: Window, model_id: str = "") -> list[Queued]:
    """The oldest queued sources, in commit order, with the texts of their entries that have
    no vector of `model_id` yet (`vector_growth.missing`)."""
    stmt = (
        select(
            vector_outbox.c.seq,
            vector_outbox.c.tenant_id,
            vector_outbox.c.source_pk,
            vector_outbox.c.source_id,
            func.coalesce(sources.c.generated_form, ""),
            sources.c.kind,
            turn_log.whole_raw(),
        )
        .select_from(vector_outbox.outerjoin(sources, sources.c.pk == vector_outbox.c.source_pk))
        .order_by(vector_outbox.c.seq)
        .limit(limit)
    )
    rows = conn.execute(stmt).all()
    texts = entries(conn, [(r[2], r[4], r[5], r[6]) for r in rows], window)
    texts = vector_growth.missing(conn, texts, model_id)
    return [
        Queued(seq, tenant_id, pk, source_id, texts.get(pk, ()))
        for seq, tenant_id, pk, source_id, *_ in rows
    ]


def entries(
    conn: Connection,
    rows: Sequence[tuple[int, str, str, str | None]],
    window: Window,
    keys: dict[int, list[int]] | None = None,
) -> dict[int, tuple[Entry, ...]]:
    """For (source pk, generated form, kind, raw) rows: the source's search index entries,
    each with the text it was indexed from (the generated form for a whole-text entry, the
    passage rendered from the messages for a passage). A source without text has none.
    `keys`: the sources' entry keys when the caller read them already (`all_entry_keys`)."""
    if keys is None:
        keys = _entry_keys(conn, [pk for pk, generated, _, _ in rows if generated])
    out: dict[int, tuple[Entry, ...]] = {}
    for pk, generated, kind, raw in rows:
        found: list[Entry] = []
        messages = None
        for key in keys.get(pk, []) if generated else []:
            rng = entry_keys.range_of(key)
            if rng is None:
                found.append(Entry(0, generated))
                continue
            if messages is None:
                messages = Body.from_raw(SourceKind(kind), raw or "").messages
            found.append(
                Entry(entry_keys.passage(key), passages.indexed_text(messages, rng, window))
            )
        out[pk] = tuple(found)
    return out


def all_entry_keys(conn: Connection) -> dict[int, list[int]]:
    """Every source's search index entry keys, in one pass (for bulk loads)."""
    out: dict[int, list[int]] = {}
    for key in conn.execute(select(postings.c.pk).where(postings.c.term == "")).scalars():
        out.setdefault(entry_keys.source_pk(key), []).append(key)
    for found in out.values():
        found.sort()
    return out


def _entry_keys(conn: Connection, pks: list[int]) -> dict[int, list[int]]:
    """The search index entry keys of each source (whole text, or one per passage): one key
    range seek per source. The entry rows (the empty word) are picked out by an expression,
    not an equality: with statistics, SQLite would otherwise skip-scan the word index over
    every tenant for each source."""
    out: dict[int, list[int]] = {}
    wanted = sorted(set(pks))
    for start in range(0, len(wanted), KEY_LOOKUPS):
        seeks = [
            select(postings.c.pk).where(
                postings.c.pk.between(
                    entry_keys.key_range(pk).first, entry_keys.key_range(pk).last
                ),
                func.length(postings.c.term) == 0,
            )
            for pk in wanted[start : start + KEY_LOOKUPS]
        ]
        stmt = seeks[0] if len(seeks) == 1 else union_all(*seeks)
        for key in sorted(conn.execute(stmt).scalars()):
            out.setdefault(entry_keys.source_pk(key), []).append(key)
    return out


# PostgreSQL: one store of a tenant's vectors at a time, whichever runtime's indexer runs
# it (an advisory lock held to the end of the transaction; inserts do not take it).
_STORE_TURN = text("SELECT pg_advisory_xact_lock(:space, hashtext(:tenant_id))")
_STORE_SPACE = 0x766563  # the lock's key space: "vec"


def store_turn(conn: Connection, tenant_id: str) -> None:
    """Waits for the tenant's vector store turn (PostgreSQL; SQLite's write turn is one
    already). A vector's seq is taken from a sequence as it is inserted: two runtimes'
    stores of one tenant interleaved could commit a smaller seq after a larger one, which a
    runtime's held rows, brought up to date by seq (`search.signatures`), would miss."""
    if conn.dialect.name == "postgresql":
        conn.execute(_STORE_TURN, {"space": _STORE_SPACE, "tenant_id": tenant_id})


def store_many(
    conn: Connection,
    stored: Sequence[tuple[Queued, Sequence[Vector]]],
    model_id: str,
    now_us: int,
) -> int:
    """Stores, for each (queued source, the vectors of its entries) of one tenant, the
    vectors if the source is still queued and still has its text (a purge in between wins),
    beside its vectors of this model (`vector_growth`); dequeues every one either way. A few
    statements for them all, whatever their number. Returns how many sources got vectors."""
    if not stored:
        return 0
    store_turn(conn, stored[0][0].tenant_id)
    still_queued = set(
        conn.execute(
            delete(vector_outbox)
            .where(vector_outbox.c.seq.in_([item.seq for item, _ in stored]))
            .returning(vector_outbox.c.seq)
        ).scalars()
    )
    wanted = [
        (item, embedded) for item, embedded in stored if item.seq in still_queued and item.entries
    ]
    if not wanted:
        return 0
    s = sources.c
    revisions: dict[int, int] = {
        pk: revision
        for pk, revision in conn.execute(
            select(s.pk, s.revision).where(
                s.pk.in_([item.source_pk for item, _ in wanted]),
                s.tenant_id == wanted[0][0].tenant_id,
                func.coalesce(func.length(s.generated_form), 0) > 0,
                s.indexed_revision > 0,
            )
        )
    }
    wanted = [(item, embedded) for item, embedded in wanted if item.source_pk in revisions]
    if not wanted:
        return 0
    vector_growth.clear_for_many(
        conn, model_id, [(item.source_pk, e.passage) for item, _ in wanted for e in item.entries]
    )
    conn.execute(
        insert(memory_vectors),
        [
            {
                "source_pk": item.source_pk,
                "passage": entry.passage,
                "model_id": model_id,
                "tenant_id": item.tenant_id,
                "source_id": item.source_id,
                "source_revision": revisions[item.source_pk],
                "dimension": len(vector),
                "embedding": encode(conn, vector),
                "signature": signature(vector),
                "created_at_us": now_us,
            }
            for item, embedded in wanted
            for entry, vector in zip(item.entries, embedded, strict=True)
        ],
    )
    return len(wanted)


def sent_form(column: Any) -> Any:
    """PostgreSQL: a stored vector in pgvector's binary form (`vector_send`: a fraction of
    the stored array's text to send and to parse; `search.signature_rows.packed_vectors`
    reads it)."""
    from pgvector.sqlalchemy import Vector as PgVector

    return func.vector_send(sql_cast(column, PgVector()))


def encode(conn: Connection, vector: Sequence[float]) -> object:
    """float32 bytes on SQLite (sqlite-vec's format), a real[] on PostgreSQL."""
    if conn.dialect.name == "sqlite":
        return array("f", vector).tobytes()
    return [float(x) for x in vector]
