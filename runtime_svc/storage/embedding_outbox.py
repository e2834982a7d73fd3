"""The embedding outbox: the sources waiting for the background indexer, one place each.

A source is queued in the transaction that makes it indexable (an insert, an append, an
approval). A source queued again while it waits keeps its one place (unique `source_pk`) and
its age; its `version` goes up, so the indexer, which embeds whatever entries the source
lacks when it takes it, leaves the place queued if the source grew meanwhile (the next take
embeds only the new entries). On PostgreSQL the version's update holds the place's row until
the queueing transaction commits, so an indexer dequeuing it waits and sees the new version.

The indexer takes places in turns across tenants (each tenant's oldest first, then each
tenant's second, ...), so one tenant's burst never holds another's memories back. A place
whose embedding fails is held back (`not_before_us`, doubling up to an hour) with its
failure recorded (`attempts`, `failed_at_us`, `last_error`: an exception's type name, never
text); after `SET_ASIDE_AFTER` failures it is set aside: still queued and reported, tried
again only once an hour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import (
    BigInteger,
    Connection,
    Table,
    case,
    delete,
    func,
    literal,
    literal_column,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql import Executable

from runtime_svc.storage import compiled
from runtime_svc.storage.models import MemoryVectorRow, VectorOutboxRow
from runtime_svc.storage.pending_rows import PendingRows
from runtime_svc.storage.source_rows import sources

vector_outbox = cast(Table, VectorOutboxRow.__table__)
memory_vectors = cast(Table, MemoryVectorRow.__table__)
SET_ASIDE_AFTER = 5  # failures, after which a place is set aside (and reported)
FIRST_BACKOFF_S = 2.0
MAX_BACKOFF_S = 3600.0


def _enqueue(dialect: str) -> Executable:
    """INSERT of a place; a source already queued keeps its place, one version up."""
    o = vector_outbox
    # No bound parameter beyond the row's own (`compiled` binds those by name).
    bumped = {"version": o.c.version + literal_column("1")}
    if dialect == "postgresql":
        return postgresql.insert(o).on_conflict_do_update(
            index_elements=[o.c.source_pk], set_=bumped
        )
    return sqlite.insert(o).on_conflict_do_update(index_elements=[o.c.source_pk], set_=bumped)


_ENQUEUE = {name: _enqueue(name) for name in ("sqlite", "postgresql")}


def enqueue_statement(conn: Connection) -> Executable:
    return _ENQUEUE["postgresql" if conn.dialect.name == "postgresql" else "sqlite"]


def place(tenant_id: str, source_pk: int, source_id: str) -> dict[str, object]:
    return {
        "tenant_id": tenant_id,
        "source_pk": source_pk,
        "source_id": source_id,
        "enqueued_at_us": time.time_ns() // 1000,
    }


class VectorOutbox:
    """Queues a source for embedding in the transaction that makes it indexable; `wake` runs
    once that transaction committed. Disabled (no rows) while retrieval.embeddings is none:
    turning embeddings on later fills the outbox from the sources (`backfill`).

    In a group commit (`rows`), the places of all its mutations are written in one statement
    as it commits (one place per source however many of its mutations queued it)."""

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
        row = place(self.tenant_id, source_pk, source_id)
        if self._rows is not None:
            self._rows.add(row)
        else:
            compiled.execute(self.conn, enqueue_statement(self.conn), row)
        self._on_enqueue()

    def flush(self) -> None:
        """Writes the places queued so far in a group commit (before a purge deletes them)."""
        if self._rows is not None:
            self._rows.flush()


def pending_rows(conn: Connection) -> PendingRows:
    """The outbox places of a group commit, written as it commits (`VectorOutbox`), one per
    source (a statement may not update one row twice)."""
    return PendingRows(conn, enqueue_statement(conn), unique_by="source_pk")


def drop(conn: Connection, tenant_id: str, source_id: str) -> None:
    """Removes a source's place (it is purged: never embedded)."""
    conn.execute(
        delete(vector_outbox).where(
            vector_outbox.c.tenant_id == tenant_id, vector_outbox.c.source_id == source_id
        )
    )


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
        vector_outbox.insert().from_select(
            ["tenant_id", "source_pk", "source_id", "enqueued_at_us"], missing
        )
    ).rowcount


def pending(conn: Connection, tenant_id: str | None = None) -> int:
    stmt = select(func.count()).select_from(vector_outbox)
    if tenant_id is not None:
        stmt = stmt.where(vector_outbox.c.tenant_id == tenant_id)
    return conn.execute(stmt).scalar_one()


@dataclass(frozen=True)
class Backlog:
    """What waits to be embedded (one tenant's, or all): how many, since when, how many set
    aside, and the latest failure recorded on a waiting place."""

    pending: int
    oldest_us: int  # when the oldest waiting place was queued (0: none)
    set_aside: int
    last_error: str  # an exception's type name ("" : none)
    last_failed_us: int

    def lag_s(self, now_us: int) -> float:
        """How long the oldest waiting place has waited (0: nothing waits)."""
        return max(0.0, (now_us - self.oldest_us) / 1e6) if self.oldest_us else 0.0


def backlog(conn: Connection, tenant_id: str | None = None) -> Backlog:
    o = vector_outbox.c
    where = [] if tenant_id is None else [o.tenant_id == tenant_id]
    count, oldest, aside, failed = conn.execute(
        select(
            func.count(),
            func.min(o.enqueued_at_us),
            func.sum(case((o.attempts >= SET_ASIDE_AFTER, 1), else_=0)),
            func.max(o.failed_at_us),
        ).where(*where)
    ).one()
    error = ""
    if failed:
        error = (
            conn.execute(
                select(o.last_error).where(*where, o.failed_at_us == failed).limit(1)
            ).scalar()
            or ""
        )
    return Backlog(int(count), int(oldest or 0), int(aside or 0), error, int(failed or 0))


@dataclass(frozen=True)
class Place:
    """A source's place as the indexer took it."""

    seq: int
    version: int
    tenant_id: str
    source_pk: int
    source_id: str
    taken_at_us: int = 0  # when the indexer took it


def take(conn: Connection, limit: int, now_us: int) -> list[Place]:
    """Up to `limit` places due now, in turns across tenants: every tenant's oldest first,
    then every tenant's second, and so on; within a turn, in commit order."""
    o = vector_outbox.c
    turn = func.row_number().over(partition_by=o.tenant_id, order_by=o.seq).label("turn")
    due = (
        select(o.seq, o.version, o.tenant_id, o.source_pk, o.source_id, turn)
        .where(o.not_before_us <= now_us)
        .subquery()
    )
    rows = conn.execute(
        select(due.c.seq, due.c.version, due.c.tenant_id, due.c.source_pk, due.c.source_id)
        .order_by(due.c.turn, due.c.seq)
        .limit(limit)
    ).all()
    return [Place(*row, taken_at_us=now_us) for row in rows]


def next_due_us(conn: Connection) -> int | None:
    """When the earliest place held back by a failure is due (None: none is)."""
    o = vector_outbox.c
    return cast(
        int | None, conn.execute(select(func.min(o.not_before_us)).where(o.attempts > 0)).scalar()
    )


def dequeue(conn: Connection, taken: Sequence[Place]) -> set[int]:
    """Ends the places whose embedding was stored, unless the source was queued again since
    it was taken (its version moved: it waits for its newer entries). A place left queued is
    aged from when it was taken: what it still waits for came after that (the backlog's lag
    would otherwise count from the source's first queueing). Returns the seqs of the places
    still there (ended or left queued); a place gone meanwhile was purged."""
    if not taken:
        return set()
    o = vector_outbox.c
    ended = set(
        conn.execute(
            delete(vector_outbox)
            .where(tuple_(o.seq, o.version).in_([(p.seq, p.version) for p in taken]))
            .returning(o.seq)
        ).scalars()
    )
    others = [p for p in taken if p.seq not in ended]
    if not others:
        return ended
    left = set()
    for p in others:
        aged = case((o.enqueued_at_us < p.taken_at_us, p.taken_at_us), else_=o.enqueued_at_us)
        left |= set(
            conn.execute(
                update(vector_outbox)
                .where(o.seq == p.seq)
                .values(enqueued_at_us=aged)
                .returning(o.seq)
            ).scalars()
        )
    return ended | left


def failed(conn: Connection, taken: Place, error: str, now_us: int) -> int:
    """Records a failure of the place (if it is still queued) and holds it back; returns its
    attempts so far."""
    o = vector_outbox.c
    attempts = conn.execute(select(o.attempts).where(o.seq == taken.seq)).scalar()
    if attempts is None:
        return 0
    attempts += 1
    wait_s = min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2 ** (attempts - 1))
    if attempts >= SET_ASIDE_AFTER:
        wait_s = MAX_BACKOFF_S
    conn.execute(
        update(vector_outbox)
        .where(o.seq == taken.seq)
        .values(
            attempts=attempts,
            failed_at_us=now_us,
            last_error=error[:64],
            not_before_us=now_us + int(wait_s * 1e6),
        )
    )
    return int(attempts)
