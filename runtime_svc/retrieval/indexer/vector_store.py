"""The vector store's side of the background indexer: the queued sources with the texts of
their index entries still to embed (`take`), and their vectors stored (`store_many`); and a
vector's stored form (`encode`, and on PostgreSQL `sent_form` to read it back).

What a vector is, how it is found, purged and read back by source: `storage.vectors`.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection, Table, func, insert, select, union_all
from sqlalchemy import cast as sql_cast

from runtime_svc.domain import entry_keys, passages
from runtime_svc.domain.passages import Window
from runtime_svc.domain.sources import Body, SourceKind
from runtime_svc.retrieval.embedders.model import Vector, signature
from runtime_svc.retrieval.indexer import vector_growth
from runtime_svc.storage import embedding_outbox, turn_log
from runtime_svc.storage.embedding_outbox import Place
from runtime_svc.storage.models import MemoryVectorRow, SearchPosting
from runtime_svc.storage.source_rows import sources
from runtime_svc.storage.vectors import store_turn

memory_vectors = cast(Table, MemoryVectorRow.__table__)
postings = cast(Table, SearchPosting.__table__)
KEY_LOOKUPS = 100  # sources whose index entries one statement looks up


@dataclass(frozen=True)
class Entry:
    passage: int  # the index entry key's low bits (0: the whole text)
    text: str


@dataclass(frozen=True)
class Queued:
    place: Place
    # The source's index entries with the text each was indexed from; none when it has no
    # text any more (purged) or no index entry.
    entries: tuple[Entry, ...]

    @property
    def tenant_id(self) -> str:
        return self.place.tenant_id

    @property
    def source_pk(self) -> int:
        return self.place.source_pk

    @property
    def source_id(self) -> str:
        return self.place.source_id

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.entries]


def take(
    conn: Connection, limit: int, window: Window, model_id: str = "", now_us: int | None = None
) -> list[Queued]:
    """Up to `limit` queued sources due now (`embedding_outbox.take`: in turns across
    tenants), each with the texts of its entries that have no vector of `model_id` yet: only
    those entries' texts are rendered."""
    places = embedding_outbox.take(
        conn, limit, time.time_ns() // 1000 if now_us is None else now_us
    )
    if not places:
        return []
    pks = [p.source_pk for p in places]
    s = sources.c
    rows = conn.execute(
        select(s.pk, func.coalesce(s.generated_form, ""), s.kind, turn_log.whole_raw()).where(
            s.pk.in_(pks)
        )
    ).all()
    keys = vector_growth.without_vector(
        conn, _entry_keys(conn, [pk for pk, generated, _, _ in rows if generated]), model_id
    )
    texts = entries(conn, [tuple(r) for r in rows], window, keys)
    return [Queued(p, texts.get(p.source_pk, ())) for p in places]


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


def store_many(
    conn: Connection,
    stored: Sequence[tuple[Queued, Sequence[Vector]]],
    model_id: str,
    now_us: int,
) -> int:
    """Stores, for each (queued source, the vectors of its entries) of one tenant, the
    vectors if the source is still queued and still has its text (a purge in between wins),
    beside its vectors of this model (`vector_growth`); ends each place, unless its source
    was queued again since it was taken (`embedding_outbox.dequeue`). A few statements for
    them all, whatever their number. Returns how many sources got vectors."""
    if not stored:
        return 0
    store_turn(conn, stored[0][0].tenant_id)
    still_queued = embedding_outbox.dequeue(conn, [item.place for item, _ in stored])
    wanted = [
        (item, embedded)
        for item, embedded in stored
        if item.place.seq in still_queued and item.entries
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
    rows = {
        (item.source_pk, entry.passage): {
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
    }
    conn.execute(insert(memory_vectors), list(rows.values()))  # one row per entry
    return len(wanted)


def sent_form(column: Any) -> Any:
    """PostgreSQL: a stored vector in pgvector's binary form (`vector_send`: a fraction of
    the stored array's text to send and to parse; `retrieval.vectors.signature_rows.packed_vectors`
    reads it)."""
    from pgvector.sqlalchemy import Vector as PgVector

    return func.vector_send(sql_cast(column, PgVector()))


def encode(conn: Connection, vector: Sequence[float]) -> object:
    """float32 bytes on SQLite (sqlite-vec's format), a real[] on PostgreSQL."""
    if conn.dialect.name == "sqlite":
        return array("f", vector).tobytes()
    return [float(x) for x in vector]
