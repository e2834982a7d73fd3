"""Vectors ranked exactly in memory (SQLite): every vector of a small tenant, read while the
query is being embedded, or the coarse pass's candidates whose vectors are held
(`signatures`). Candidates are offered to the eligible-take loop (`retrieval.take`)
nearest first, in growing rounds (ties together: the database orders them), and checked by
their vector's seq (`source_checks.Vectors`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, bindparam, select

from runtime_svc.retrieval import take
from runtime_svc.retrieval.embedders.model import Vector
from runtime_svc.retrieval.vectors.signatures import Nearest, as_matrix
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.read_rows import driver_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

v = MemoryVectorRow.__table__
MARGIN = 8  # candidates offered beyond k in the first round, for those refused

_TENANT_VECTORS = (
    select(v.c.seq, v.c.embedding, v.c.source_pk, v.c.passage)
    .where(v.c.tenant_id == bindparam("tenant_id"), v.c.model_id == bindparam("model_id"))
    .order_by(v.c.seq)
)


def cosine(matrix: NDArray[np.float32], query: Vector) -> NDArray[np.float32]:
    """Cosine similarity of each row to `query`, in float32 as the database computes it.
    Each row's products are summed by a loop of its own (einsum), not a matrix product: BLAS
    sums a row in an order that depends on how many rows the matrix has, so one vector's
    similarity would move in its last bits with the others held beside it (a cold one
    among them)."""
    q = np.asarray(query, np.float32)
    norms = np.linalg.norm(matrix, axis=1) * np.float32(np.linalg.norm(q))
    dots = np.einsum("ij,j->i", matrix, q)
    out: NDArray[np.float32] = dots / np.where(norms > 0, norms, np.float32(1))
    return out


def tenant_vectors(
    conn: Connection, tenant_id: str, model_id: str
) -> tuple[Nearest | None, dict[tuple[int, int], Any]]:
    """Every vector of the tenant and model as candidates (None when they are not all of one
    dimension: then they are ranked in SQL); and the same vectors as stored, by entry
    (source pk, passage)."""
    rows = driver_rows(conn, _TENANT_VECTORS, {"tenant_id": tenant_id, "model_id": model_id})
    stored = {(r[2], r[3]): r[1] for r in rows}
    if not rows:
        return Nearest(np.zeros(0, np.int64), None, 0, True), stored
    vectors = as_matrix([r[1] for r in rows])
    if vectors is None:
        return None, stored
    seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    return Nearest(seqs, vectors, int(seqs[-1]), True), stored


class NearestRanker:
    """Candidates whose vectors are in memory, ranked exactly by cosine similarity (score =
    similarity), nearer than `min_similarity` only."""

    def __init__(
        self,
        near: Nearest,
        query: Vector,
        min_similarity: float,
        forget: Callable[[Sequence[int]], None],
    ) -> None:
        assert near.vectors is not None
        self._seqs = near.seqs
        self._distance = np.float32(1) - cosine(near.vectors, query)
        order = np.lexsort((near.seqs, self._distance))
        self._order = order[self._distance[order] <= np.float32(1.0 - min_similarity)]
        self._forget = forget

    def rounds(self, want: int, refused: set[int]) -> Iterator[take.Round]:
        order, distance = self._order, self._distance
        start, size = 0, want + MARGIN
        while start < len(order):
            end = min(start + size, len(order))
            while end < len(order) and distance[order[end]] == distance[order[end - 1]]:
                end += 1  # ties are offered together: the database orders them
            now = order[start:end]
            yield take.Round(
                [1.0 - float(d) for d in distance[now].tolist()], self._seqs[now].tolist()
            )
            start, size = end, size * 2

    def discard(self, refs: set[int]) -> None:
        self._forget(sorted(refs))  # vectors gone since they were held
