"""What the runtime needs from an embedding model (`retrieval.embeddings`), and the vector
arithmetic that does not depend on one. The models themselves are the other modules of this
package (`configured` says which the settings name)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

Vector = list[float]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of one model.

    `model_id` is recorded with every vector: vectors of different ids are never ranked
    together. `dimension` is 0 until the model told it (an endpoint tells with its first
    answer)."""

    model_id: str

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[Vector]: ...


def normalized(v: Sequence[float]) -> Vector:
    """`v` scaled to unit length (cosine similarity is then a dot product)."""
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else [float(x) for x in v]


def signature(v: Sequence[float]) -> bytes:
    """One bit per dimension (set when positive), packed most significant bit first: the
    coarse signature large tenants are first searched by (Hamming distance)."""
    out = bytearray((len(v) + 7) // 8)
    for i, x in enumerate(v):
        if x > 0:
            out[i // 8] |= 0x80 >> (i % 8)
    return bytes(out)
