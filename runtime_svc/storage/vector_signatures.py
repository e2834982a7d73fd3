"""The coarse pass of the semantic side over large SQLite tenants: every vector's 1-bit
signature (`memory_vectors.signature`), held in memory per tenant and model and compared to
the query's by Hamming distance with numpy.

It only proposes candidates (`memory_vectors.seq`): the statement that takes the top k
ranks them exactly, with the tenant check and the eligibility predicate, and falls back to
the exact search whenever the proposal leaves fewer than k eligible results while some
candidates were ineligible or gone (`storage.vector_search`). What is held is brought up to
date from the database at every use, inside the caller's transaction: vectors stored since
(by any process) are read by their growing `seq`; vectors deleted since are dropped once a
proposal meets them. The comparison itself can be made ahead, on the thread that embedded
the query (`propose`): the search takes that result when nothing held has changed since.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, func, select

if TYPE_CHECKING:  # numpy is imported with hybrid retrieval only
    import numpy as np

from runtime_svc.storage.models import MemoryVectorRow

v = MemoryVectorRow.__table__
MAX_HELD = 4_000_000  # vectors held in all (about 60 bytes each); least recently used go
PROPOSALS = 64  # nearest sets computed ahead, kept until their search takes them

_NEWER = (
    select(v.c.seq, v.c.signature)
    .where(
        v.c.tenant_id == bindparam("tenant_id"),
        v.c.model_id == bindparam("model_id"),
        v.c.seq > bindparam("after"),
    )
    .order_by(v.c.seq)
)
_LAST = select(func.max(v.c.seq)).where(
    v.c.tenant_id == bindparam("tenant_id"), v.c.model_id == bindparam("model_id")
)


@dataclass
class _Held:
    seqs: np.ndarray | None = None
    # The signatures as uint64 words, one row per word (a column per vector): each word of
    # every vector is compared in one contiguous pass.
    words: np.ndarray | None = None
    after: int = 0  # the largest seq read
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __len__(self) -> int:
        return 0 if self.seqs is None else len(self.seqs)


def _words(signatures: list[bytes]) -> np.ndarray:
    import numpy as np

    width = (max(len(s) for s in signatures) + 7) // 8 * 8
    packed = b"".join(s.ljust(width, b"\0") for s in signatures)
    rows = np.frombuffer(packed, np.uint8).view(np.uint64).reshape(len(signatures), width // 8)
    return np.ascontiguousarray(rows.T)


def _distances(words: np.ndarray, query: bytes) -> np.ndarray:
    """Hamming distance of every held signature to the query's."""
    import numpy as np

    q = _words([query])[:, 0]
    distance = np.zeros(words.shape[1], np.uint16)
    for word, bits in zip(words, q, strict=True):
        distance += np.bitwise_count(word ^ bits)
    return distance


def _nearest(distance: np.ndarray, n: int) -> np.ndarray:
    """The positions of `n` smallest distances (ties at the last place taken in order):
    distances are small integers, so counting them finds the cut-off in one pass, about five
    times faster than a partial sort of 100k."""
    import numpy as np

    cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), n))  # n fall at or below it
    below = np.flatnonzero(distance < cut)
    return np.concatenate([below, np.flatnonzero(distance == cut)[: n - len(below)]])


class Signatures:
    def __init__(self, max_held: int = MAX_HELD) -> None:
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_held
        # (tenant, model, query signature, n) -> (the held seqs it was computed on, the
        # nearest seqs among them)
        self._proposals: OrderedDict[tuple[str, str, bytes, int], tuple[Any, np.ndarray]] = (
            OrderedDict()
        )

    def _entry(self, tenant_id: str, model_id: str) -> _Held:
        with self._lock:
            held = self._held.get((tenant_id, model_id))
            if held is None:
                held = self._held[(tenant_id, model_id)] = _Held()
            self._held.move_to_end((tenant_id, model_id))
            total = sum(len(h) for h in self._held.values())
            while total > self._max and len(self._held) > 1:
                _, gone = self._held.popitem(last=False)
                total -= len(gone)
            return held

    def refresh(self, conn: Connection, tenant_id: str, model_id: str) -> int:
        """Brings what is held of the tenant and model up to the caller's transaction (done
        ahead, while the query is being embedded); returns the largest seq it sees."""
        held = self._entry(tenant_id, model_id)
        last = conn.execute(_LAST, {"tenant_id": tenant_id, "model_id": model_id}).scalar() or 0
        self._update(conn, held, tenant_id, model_id, last)
        return last

    def _update(
        self, conn: Connection, held: _Held, tenant_id: str, model_id: str, last: int
    ) -> None:
        import numpy as np

        params = {"tenant_id": tenant_id, "model_id": model_id}
        with held.lock:
            if last <= held.after:
                return
            rows = conn.execute(_NEWER, params | {"after": held.after}).all()
            if rows:
                seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                words = _words([r[1] for r in rows])
                held.seqs = seqs if held.seqs is None else np.concatenate([held.seqs, seqs])
                held.words = words if held.words is None else np.concatenate([held.words, words], 1)
                held.after = int(seqs[-1])

    def nearest(
        self,
        conn: Connection,
        tenant_id: str,
        model_id: str,
        query: bytes,
        n: int,
        last: int | None = None,
    ) -> tuple[list[int], int]:
        """The seqs of the `n` vectors of the tenant and model whose signatures are nearest
        to `query`'s, as of the caller's transaction, and the largest seq it sees (a seq
        above it is not in the caller's snapshot; `last`: that seq, when `refresh` told it
        in the same transaction)."""

        held = self._entry(tenant_id, model_id)
        if last is None:
            params = {"tenant_id": tenant_id, "model_id": model_id}
            last = conn.execute(_LAST, params).scalar() or 0
        self._update(conn, held, tenant_id, model_id, last)  # nothing to do after `refresh`
        with held.lock:
            seqs, words = held.seqs, held.words
        if words is None or seqs is None or not len(seqs):
            return [], last
        with self._lock:
            proposed = self._proposals.pop((tenant_id, model_id, query, n), None)
        if proposed is not None and proposed[0]() is seqs:  # nothing held changed since
            chosen = proposed[1]
        else:
            chosen = seqs[_nearest(_distances(words, query), n)] if len(seqs) > n else seqs
        return [int(s) for s in chosen if s <= last], last

    def propose(self, tenant_id: str, model_id: str, query: bytes, n: int) -> None:
        """Computes ahead, off the caller's transaction (while the query's words are being
        searched), what `nearest` will find among what is held now; `nearest` takes it when
        nothing held has changed since. Nothing is done for a tenant not held."""
        with self._lock:
            held = self._held.get((tenant_id, model_id))
        if held is None:
            return
        with held.lock:
            seqs, words = held.seqs, held.words
        if words is None or seqs is None or len(seqs) <= n:
            return
        chosen = seqs[_nearest(_distances(words, query), n)]
        with self._lock:
            # Held arrays are replaced, never changed in place: the same object, the same data.
            self._proposals[(tenant_id, model_id, query, n)] = (weakref.ref(seqs), chosen)
            while len(self._proposals) > PROPOSALS:
                self._proposals.popitem(last=False)

    def forget(self, tenant_id: str, model_id: str, seqs: list[int]) -> None:
        """Drops vectors found deleted."""
        with self._lock:
            held = self._held.get((tenant_id, model_id))
        if held is None or not seqs:
            return
        import numpy as np

        with held.lock:
            if held.seqs is None:
                return
            keep = ~np.isin(held.seqs, np.asarray(seqs, np.int64))
            held.seqs = held.seqs[keep]
            if held.words is not None:
                held.words = held.words[:, keep]
