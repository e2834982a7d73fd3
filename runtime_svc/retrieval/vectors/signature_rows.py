"""The signatures (and, while they fit, the vectors) of one tenant and model held in memory
for the coarse pass (`retrieval.vectors.signatures`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Array = NDArray[Any]


@dataclass(frozen=True)
class HeldView:
    """What a first pass reads of `HeldRows`, taken under its lock and read after it is let
    go: the arrays are never changed in place (rows are appended past the views, a change
    of flags or a removal makes new arrays)."""

    seqs: Array
    words: Array
    vectors: Array | None
    codes: Array | None
    factor: Array | None
    ok: Array | None


@dataclass
class HeldRows:
    seqs: Array | None = None
    # The signatures as uint64 words, one row per word (a column per vector): each word of
    # every vector is compared in one contiguous pass.
    words: Array | None = None
    after: int = 0  # the largest seq read
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The vectors, row for row with `seqs` (a view of the first rows of `buffer`, which
    # grows by doubling: rows are appended past the views handed out, never changed), while
    # `holds_vectors`.
    holds_vectors: bool = True
    vectors: Array | None = None
    buffer: Array | None = None
    # Row for row with `seqs`: each vector's entry key, and whether it may take a place in
    # a shortlist (`vector_mask`; `stamp`: the tenant's index stamp it follows, -1 before
    # the first catch-up); with the vectors, their int8 codes (`quantized`).
    keys: Array | None = None
    ok: Array | None = None
    stamp: int = -1
    codes: Array | None = None
    factor: Array | None = None
    version: int = 0  # changes whenever anything held does (a proposal is for one version)
    # Room taken for vectors still being read (`Signatures._append`, under `lock`): counted
    # against the bound with those held, so that no other tenant's reading counts on it.
    reserved: int = 0
    _codes: Array | None = None  # the buffers `codes` and `factor` are views of
    _factor: Array | None = None
    # `keys` sorted (stably: of equal keys, the later row last) and the row of each, made
    # for the `keys` array they were sorted from (`key_index`).
    _index: tuple[Array, Array, Array] | None = None

    def __len__(self) -> int:
        return 0 if self.seqs is None else len(self.seqs)

    def view(self) -> HeldView:
        """The rows as they are (under `lock`, with rows held)."""
        assert self.seqs is not None and self.words is not None
        return HeldView(self.seqs, self.words, self.vectors, self.codes, self.factor, self.ok)

    def held_vectors(self) -> int:
        return len(self) if self.holds_vectors else 0

    def room(self) -> int:
        """The vectors held and those room is taken for."""
        return self.held_vectors() + self.reserved if self.holds_vectors else 0

    def append(
        self, seqs: Array, words: Array, vectors: Array | None, keys: Array, ok: Array
    ) -> None:
        """Rows read since, under `lock`. Another tenant's reading may let this one's vectors
        go meanwhile (`let_go`, to make room): they are then not put back."""

        self.version += 1
        self.seqs = seqs if self.seqs is None else np.concatenate([self.seqs, seqs])
        self.words = words if self.words is None else np.concatenate([self.words, words], 1)
        self.keys = keys if self.keys is None else np.concatenate([self.keys, keys])
        self.ok = ok if self.ok is None else np.concatenate([self.ok, ok])
        self.after = int(seqs[-1])
        held, buffer = self.vectors, self.buffer
        if vectors is None or not self.holds_vectors:
            self.drop_vectors()
            return
        n = 0 if held is None else len(held)
        if buffer is not None and buffer.shape[1] != vectors.shape[1]:
            self.drop_vectors()  # one model, one dimension: never mixed
            return
        if buffer is None or n + len(vectors) > len(buffer):
            grown = np.empty((max(2 * n, n + len(vectors), 1024), vectors.shape[1]), np.float32)
            if held is not None:
                grown[:n] = held
            buffer = grown
        buffer[n : n + len(vectors)] = vectors
        if self.holds_vectors:
            self.buffer, self.vectors = buffer, buffer[: n + len(vectors)]
            self._append_codes(vectors, n, len(buffer))

    def _append_codes(self, vectors: Array, n: int, size: int) -> None:
        """The new vectors' int8 codes, past the `n` held (in buffers of `size` rows, grown
        with the vectors' own)."""

        from runtime_svc.retrieval.vectors.quantized import quantize

        codes, factor = quantize(vectors)
        if self._codes is None or len(self._codes) != size:
            grown = np.empty((size, codes.shape[1]), np.int8)
            scales = np.empty(size, np.float32)
            if self.codes is not None and self.factor is not None:
                grown[:n], scales[:n] = self.codes, self.factor
            self._codes, self._factor = grown, scales
        assert self._factor is not None
        self._codes[n : n + len(codes)], self._factor[n : n + len(codes)] = codes, factor
        self.codes, self.factor = self._codes[: n + len(codes)], self._factor[: n + len(codes)]

    def rows_of(self, wanted: Array) -> tuple[Array, Array]:
        """For entry keys `wanted`, those held and the row of each (a key held twice: its
        later row, the latest vector); under `lock`. Looked up in `keys` sorted once per
        change of the rows, not searched through for every query."""
        keys = self.keys
        if keys is None or not len(keys):
            return wanted[:0], np.zeros(0, np.int64)
        if self._index is None or self._index[0] is not keys:
            order = np.argsort(keys, kind="stable")
            self._index = (keys, keys[order], order)
        _, ordered, order = self._index
        at = np.searchsorted(ordered, wanted, side="right") - 1
        found = (at >= 0) & (ordered[np.maximum(at, 0)] == wanted)
        return wanted[found], order[at[found]]

    def set_ok(self, ok: Array, stamp: int) -> None:
        self.version += 1
        self.ok, self.stamp = ok, stamp

    def let_go(self) -> None:
        """Another tenant needs the room while this one's `lock` is held (a search, a
        catch-up): its vectors count as gone at once, and go when `settle` runs under the
        lock (the holder's arrays are not pulled from under it)."""
        self.holds_vectors, self.reserved = False, 0

    def settle(self) -> None:
        """Under `lock`: vectors let go of (`let_go`) go now."""
        if not self.holds_vectors and self.vectors is not None:
            self.drop_vectors()

    def drop_vectors(self) -> None:
        """Under `lock`: the vectors go, their signatures stay."""
        self.version += 1
        self.holds_vectors, self.vectors, self.buffer, self.reserved = False, None, None, 0
        self.codes = self.factor = self._codes = self._factor = None

    def keep(self, keep: Array) -> None:
        """Keeps the rows where `keep` is set (new arrays: views handed out stay as they were)."""
        assert self.seqs is not None
        self.version += 1
        self.seqs = self.seqs[keep]
        if self.keys is not None and self.ok is not None:
            self.keys, self.ok = self.keys[keep], self.ok[keep]
        if self.codes is not None and self.factor is not None:
            self.codes, self.factor = self.codes[keep], self.factor[keep]
            self._codes, self._factor = self.codes, self.factor
        if self.words is not None:
            self.words = self.words[:, keep]
        if self.vectors is not None:
            self.buffer = self.vectors = self.vectors[keep]


def packed(signatures: list[bytes]) -> Array:
    width = (max(len(s) for s in signatures) + 7) // 8 * 8
    packed = b"".join(s.ljust(width, b"\0") for s in signatures)
    rows = np.frombuffer(packed, np.uint8).view(np.uint64).reshape(len(signatures), width // 8)
    return np.ascontiguousarray(rows.T)


def as_matrix(embeddings: list[bytes]) -> Array | None:
    """Stored embeddings (float32 bytes) as rows of a matrix; None unless all are of one
    dimension."""
    if len({len(e) for e in embeddings}) != 1 or not embeddings[0]:
        return None
    return np.frombuffer(b"".join(embeddings), np.float32).reshape(len(embeddings), -1)


def packed_vectors(sent: list[bytes]) -> Array | None:
    """PostgreSQL: vectors in pgvector's binary form (`vector_send`: the dimension and a
    reserved word, two bytes each, then big-endian float32s) as rows of a float32 matrix;
    None unless all are of one dimension."""
    if len({len(e) for e in sent}) != 1 or len(sent[0]) <= 4:
        return None
    rows = np.frombuffer(b"".join(sent), ">f4").reshape(len(sent), -1)[:, 1:]
    return np.ascontiguousarray(rows, np.float32)


def unpacked(sent: bytes) -> Array:
    """PostgreSQL: one vector in pgvector's binary form as float32 (`packed_vectors`)."""
    return np.frombuffer(sent, ">f4")[1:].astype(np.float32)


def _distances(words: Array, query: bytes) -> Array:
    """Hamming distance of every held signature to the query's."""

    # One pass over every word of every signature (three array operations, not three a word).
    found: Array = np.bitwise_count(words ^ packed([query])).sum(axis=0, dtype=np.uint16)
    return found


def _nearest(distance: Array, n: int) -> Array:
    """The positions of `n` smallest distances (ties at the last place taken in order):
    distances are small integers, so counting them finds the cut-off in one pass, about five
    times faster than a partial sort of 100k."""

    cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), n))  # n fall at or below it
    below = np.flatnonzero(distance < cut)
    return np.concatenate([below, np.flatnonzero(distance == cut)[: n - len(below)]])
