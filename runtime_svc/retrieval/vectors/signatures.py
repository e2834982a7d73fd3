"""The first pass of the semantic side over large SQLite tenants, held in memory per tenant
and model: every vector's 1-bit signature (`memory_vectors.signature`) and, while the held
vectors of all tenants fit `max_vectors`, the vector itself (float32) and its int8 codes
(`retrieval.vectors.quantized`), row for row; and whether each may take a place in a shortlist
(`retrieval.vectors.vector_mask`: the vectors of sources not eligible never do, the mask is applied
before the top n is taken).

It only proposes candidates (`memory_vectors.seq`): the `n` nearest eligible ones by the
int8 codes when the vectors are held (exact below `quantized.EXACT_MAX`), else by Hamming
distance of the signatures. They are ranked exactly afterwards (in memory when the vectors
are held, else by the statement that reads them) and their sources checked with the whole
eligibility predicate, falling back to the exact search whenever that leaves fewer than k
eligible results while some candidates were refused or gone (`retrieval.vectors.vector_search`).

What is held is brought up to date from the database at every use, inside the caller's
transaction: vectors stored since (by any process) are read by their growing `seq`, the
entries' flags by their stamps, vectors deleted since by a count. The comparison itself can
be made ahead, on the thread that embedded the query (`propose`): the search takes that
result when nothing held has changed since.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, Select, bindparam, func, select

from runtime_svc.domain.entry_keys import with_passage
from runtime_svc.retrieval.embedders.model import Vector, signature
from runtime_svc.retrieval.indexer.vector_store import sent_form
from runtime_svc.retrieval.vectors import quantized, vector_mask
from runtime_svc.retrieval.vectors.signature_rows import (
    HeldRows,
    HeldView,
    _distances,
    _nearest,
    as_matrix,
    packed,
    packed_vectors,
)
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.repositories import TenantEntries

if TYPE_CHECKING:  # numpy is imported with hybrid retrieval only
    from numpy.typing import NDArray

    Array = NDArray[Any]

__all__ = ["Nearest", "Signatures", "_distances", "_nearest", "as_matrix"]

v = MemoryVectorRow.__table__
MAX_HELD = 4_000_000  # signatures held in all (about 60 bytes each); least recently used go
MAX_VECTORS = 250_000  # vectors held in all (4 bytes a dimension: 384 MB at 384 dimensions)
PROPOSALS = 64  # nearest sets computed ahead, kept until their search takes them
READ_ROWS = 50_000  # vectors read by one statement when what is held is brought up to date

# The tenant's vectors of the model stored after a seq.
_STORED_AFTER = (
    v.c.tenant_id == bindparam("tenant_id"),
    v.c.model_id == bindparam("model_id"),
    v.c.seq > bindparam("after"),
)
_NEWER = (
    select(v.c.seq, v.c.signature, v.c.source_pk, v.c.passage)
    .where(*_STORED_AFTER)
    .order_by(v.c.seq)
    .limit(bindparam("rows"))
)


@lru_cache(maxsize=2)
def _newer_vectors(dialect: str) -> Select[Any]:
    """The vectors stored since, with their signatures: on PostgreSQL each vector in
    pgvector's binary form (`packed_vectors`), not the stored array's text."""
    embedding = sent_form(v.c.embedding) if dialect == "postgresql" else v.c.embedding
    return (
        select(v.c.seq, v.c.signature, v.c.source_pk, v.c.passage, embedding)
        .where(*_STORED_AFTER)
        .order_by(v.c.seq)
        .limit(bindparam("rows"))
    )


_LAST = select(func.max(v.c.seq)).where(
    v.c.tenant_id == bindparam("tenant_id"), v.c.model_id == bindparam("model_id")
)
_COUNT_NEWER = select(func.count()).where(*_STORED_AFTER)


@dataclass(frozen=True)
class Nearest:
    """The coarse pass's candidates as of the caller's transaction: their seqs (the nearest
    by signature, in no particular order), and their vectors when held (row for row)."""

    seqs: Array
    vectors: Array | None
    last: int  # the largest seq in the caller's snapshot
    # Every vector of the tenant and model held was proposed (no fewer than asked for):
    # the candidates are the whole tenant, so none can have taken an eligible one's place.
    complete: bool = False
    # The most any eligible vector left out may be similar to the query (-inf: none was left
    # out; +inf: not known, the candidates were chosen by their signatures).
    left_out: float = np.inf


def _key(query: Vector) -> bytes:

    return np.asarray(query, np.float32).tobytes()


def _choose(held: HeldView, query: Vector, n: int) -> tuple[Array, float]:
    """The positions of the `n` held rows nearest to the query among those that may take a
    place (`held.ok`; every one of them when there are no more): by the int8 codes or the
    vectors when held (`retrieval.vectors.quantized`), else by the signatures' Hamming distance. And
    the most any row left out may be similar to the query (`Nearest.left_out`): the least of
    the chosen ones' similarities, plus the int8 codes' error when they were compared by
    them."""

    if held.vectors is not None:
        sims = quantized.similarities(held.codes, held.factor, held.vectors, query)
        chosen = quantized.shortlist(sims, held.ok, n)
        if len(chosen) < n:
            return chosen, -np.inf
        exact = quantized.is_exact(len(held.vectors), held.codes)
        return chosen, float(sims[chosen].min()) + (0.0 if exact else quantized.ERROR_MARGIN)
    distance = _distances(held.words, signature(query))
    if held.ok is None:
        return (_nearest(distance, n) if len(distance) > n else np.arange(len(distance))), np.inf
    eligible = int(held.ok.sum())
    if eligible <= n:
        return np.flatnonzero(held.ok), np.inf
    far = np.where(held.ok, distance, np.uint16(distance.max() + 1))
    return _nearest(far, n), np.inf


class Signatures:
    def __init__(self, max_held: int = MAX_HELD, max_vectors: int = MAX_VECTORS) -> None:
        self._held: OrderedDict[tuple[str, str], HeldRows] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_held
        self._max_vectors = max_vectors
        # (tenant, model, query vector, n) -> (the held rows' version it was computed on,
        # the positions of the nearest among them, the most a row left out may be similar)
        self._proposals: OrderedDict[tuple[str, str, bytes, int], tuple[int, Array, float]] = (
            OrderedDict()
        )

    def _entry(self, tenant_id: str, model_id: str) -> HeldRows:
        with self._lock:
            held = self._held.get((tenant_id, model_id))
            if held is None:
                held = self._held[(tenant_id, model_id)] = HeldRows(
                    holds_vectors=self._max_vectors > 0
                )
            self._held.move_to_end((tenant_id, model_id))
            total = sum(len(h) for h in self._held.values())
            while total > self._max and len(self._held) > 1:
                _, gone = self._held.popitem(last=False)
                total -= len(gone)
            return held

    def _vectors_fit(self, held: HeldRows, more: int) -> bool:
        """Whether `more` vectors of `held` (under its lock) fit beside every tenant's held
        vectors and the room taken for those being read; if they do, the room for them is
        taken (`HeldRows.reserved`). To make room the least recently used tenants' vectors go
        first (their signatures stay): at once, or, for a tenant being read or searched right
        now, when its lock is next held (`HeldRows.let_go`; its lock is not waited for: two
        tenants' readers would each wait on the other)."""
        with self._lock:
            if held.held_vectors() + more > self._max_vectors:
                return False  # never, even alone
            others = [h for h in self._held.values() if h is not held and h.holds_vectors]
            total = held.held_vectors() + more + sum(h.room() for h in others)
            for h in others:
                if total <= self._max_vectors:
                    break
                total -= h.room()
                if h.lock.acquire(blocking=False):
                    try:
                        h.drop_vectors()
                    finally:
                        h.lock.release()
                else:
                    h.let_go()
            held.reserved = more
            return True

    def warm(
        self,
        connect: Callable[[], Any],
        tenants: Sequence[TenantEntries],
        model_id: str,
        larger_than: int,
    ) -> int:
        """Holds the signatures (and, while they fit, the vectors) of the largest tenants
        with more than `larger_than` index entries, within `max_held`: a runtime does this
        before it serves, so that no search pays for reading them. `tenants`: (tenant,
        index entries). Returns how many vectors' signatures are held. A tenant whose vectors
        no longer fit beside those of the larger ones held before it holds its signatures
        only: it does not take their room (the least recently used would go, the largest)."""
        held_in_all = vectors_in_all = 0
        for tenant_id, entries in sorted(tenants, key=lambda t: -t.entries):
            if entries <= larger_than or held_in_all + entries > self._max:
                continue
            held = self._entry(tenant_id, model_id)
            if held.holds_vectors and vectors_in_all + entries > self._max_vectors:
                with held.lock:
                    held.drop_vectors()
            with connect() as conn, conn.begin():
                self.refresh(conn, tenant_id, model_id)
            held_in_all += len(held)
            vectors_in_all += held.held_vectors()
        return held_in_all

    def sweep(self, connect: Callable[[], Any]) -> None:
        """Brings what every tenant and model holds up to date with the rows' flags and the
        vectors deleted since (each in a read transaction of its own), so that the vectors of
        sources revoked or erased since leave this process's memory even when the tenant is
        not searched here again. Vectors stored since are not read (at the tenant's next
        search they are): an idle tenant does not grow, nor take others' room."""
        with self._lock:
            keys = list(self._held)
        for tenant_id, model_id in keys:
            with self._lock:  # not made again if it went meanwhile, nor made more recent
                held = self._held.get((tenant_id, model_id))
            if held is None:
                continue
            with connect() as conn, conn.begin(), held.lock:
                held.settle()
                vector_mask.catch_up(conn, held, tenant_id, model_id)

    def refresh(self, conn: Connection, tenant_id: str, model_id: str) -> int:
        """Brings what is held of the tenant and model up to the caller's transaction (done
        ahead, while the query is being embedded); returns the largest seq it sees."""
        held = self._entry(tenant_id, model_id)
        last = conn.execute(_LAST, {"tenant_id": tenant_id, "model_id": model_id}).scalar() or 0
        self._update(conn, held, tenant_id, model_id, last)
        return last

    def _update(
        self, conn: Connection, held: HeldRows, tenant_id: str, model_id: str, last: int
    ) -> None:
        with held.lock:
            held.settle()
            if last > held.after:
                self._append(conn, held, tenant_id, model_id)
            vector_mask.catch_up(conn, held, tenant_id, model_id)

    def _append(self, conn: Connection, held: HeldRows, tenant_id: str, model_id: str) -> None:
        """The vectors stored since (under `held.lock`), with their entries' flags, read
        `READ_ROWS` at a time (a tenant of 1M is not read into one list of rows)."""

        params = {"tenant_id": tenant_id, "model_id": model_id}
        if held.holds_vectors:
            # Room for all of them is made (or refused) and taken once, before the first
            # chunk: made chunk by chunk, it would let other tenants' vectors go for a tenant
            # that does not fit in the end, or let two tenants read at once count on the
            # same room.
            coming = conn.execute(_COUNT_NEWER, params | {"after": held.after}).scalar() or 0
            if not self._vectors_fit(held, coming):
                held.drop_vectors()
        try:
            self._read_newer(conn, held, tenant_id, model_id)
        finally:
            held.reserved = 0

    def _read_newer(self, conn: Connection, held: HeldRows, tenant_id: str, model_id: str) -> None:
        """`_append`'s reads, chunk by chunk; the room taken for each is released as it is held."""
        dialect = conn.dialect.name
        params = {"tenant_id": tenant_id, "model_id": model_id}
        while True:
            stmt = _newer_vectors(dialect) if held.holds_vectors else _NEWER
            rows = conn.execute(stmt, params | {"after": held.after, "rows": READ_ROWS}).all()
            if not rows:
                return
            vectors = None
            if held.holds_vectors:
                embeddings = [r[4] for r in rows]
                pg = dialect == "postgresql"
                vectors = packed_vectors(embeddings) if pg else as_matrix(embeddings)
            keys = np.fromiter((with_passage(r[2], r[3]) for r in rows), np.int64, len(rows))
            # Before the first catch-up every flag is read afresh (`vector_mask.catch_up`).
            ok = np.ones(len(rows), np.bool_)
            if held.stamp >= 0:
                ok = vector_mask.flags_of(conn, tenant_id, keys)
            seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            held.append(seqs, packed([r[1] for r in rows]), vectors, keys, ok)
            held.reserved = max(0, held.reserved - len(rows))  # now held
            if len(rows) < READ_ROWS:
                return

    def nearest(
        self,
        conn: Connection,
        tenant_id: str,
        model_id: str,
        query: Vector,
        n: int,
        last: int | None = None,
    ) -> Nearest:
        """The `n` eligible vectors of the tenant and model nearest to `query` by the first
        pass (`_choose`), as of the caller's transaction (`last`: the largest seq `refresh`
        saw in the same transaction; a seq above it is not in the caller's snapshot)."""

        held = self._entry(tenant_id, model_id)
        if last is None:  # else `refresh` brought it up to the caller's transaction
            params = {"tenant_id": tenant_id, "model_id": model_id}
            last = conn.execute(_LAST, params).scalar() or 0
            self._update(conn, held, tenant_id, model_id, last)
        with held.lock:
            seqs, vectors, version = held.seqs, held.vectors, held.version
            chosen, left_out = None, np.inf
            if seqs is not None and len(seqs):
                with self._lock:
                    proposed = self._proposals.pop((tenant_id, model_id, _key(query), n), None)
                if proposed is not None and proposed[0] == version:  # nothing changed since
                    chosen, left_out = proposed[1], proposed[2]
                else:
                    chosen, left_out = _choose(held.view(), query, n)
        if seqs is None or chosen is None:
            return Nearest(np.zeros(0, np.int64), None, last, True)
        complete = len(chosen) < n  # every eligible vector held was proposed
        seqs = seqs[chosen]
        vectors = None if vectors is None else vectors[chosen]
        visible = seqs <= last
        if not visible.all():
            seqs = seqs[visible]
            vectors = None if vectors is None else vectors[visible]
        return Nearest(seqs, vectors, last, complete, left_out)

    def propose(self, tenant_id: str, model_id: str, query: Vector, n: int) -> None:
        """Computes ahead, off the caller's transaction (while the query's words are being
        searched), what `nearest` will find among what is held now; `nearest` takes it when
        nothing held has changed since. Nothing is done for a tenant not held."""
        with self._lock:
            held = self._held.get((tenant_id, model_id))
        if held is None:
            return
        with held.lock:  # let go for the pass: a search's catch-up need not wait for it
            if held.seqs is None or not len(held.seqs):
                return
            version, view = held.version, held.view()
        chosen, left_out = _choose(view, query, n)
        with self._lock:
            self._proposals[(tenant_id, model_id, _key(query), n)] = (version, chosen, left_out)
            while len(self._proposals) > PROPOSALS:
                self._proposals.popitem(last=False)

    def holds_vectors(self, tenant_id: str, model_id: str) -> bool:
        """Whether the tenant's vectors are held (use after `refresh`)."""
        with self._lock:
            held = self._held.get((tenant_id, model_id))
        return held is not None and held.vectors is not None

    def stored(self, tenant_id: str, model_id: str, entries: list[tuple[int, int]]) -> Any:
        """The held vectors of the given entries ((source pk, passage) pairs; those held),
        by entry, or None when the tenant's vectors are not held (use after `refresh`)."""

        with self._lock:
            held = self._held.get((tenant_id, model_id))
        if held is None:
            return None
        wanted: dict[int, tuple[int, int]] = {with_passage(pk, p): (pk, p) for pk, p in entries}
        wanted_keys = np.fromiter(wanted, np.int64, len(wanted))
        with held.lock:
            keys, vectors = held.keys, held.vectors
            if keys is None or vectors is None or len(keys) != len(vectors):
                return None
            found, rows = held.rows_of(wanted_keys)
        return {wanted[k]: vectors[r] for k, r in zip(found.tolist(), rows.tolist(), strict=True)}

    def forget(self, tenant_id: str, model_id: str, seqs: list[int]) -> None:
        """Drops vectors found deleted."""
        with self._lock:
            held = self._held.get((tenant_id, model_id))
        if held is None or not seqs:
            return
        with held.lock:
            if held.seqs is None:
                return
            held.keep(~np.isin(held.seqs, np.asarray(seqs, np.int64)))
