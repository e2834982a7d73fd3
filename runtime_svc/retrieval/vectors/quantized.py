"""The compressed first pass of the semantic side over a large tenant's held vectors: each
vector held a second time as int8 codes (one byte a dimension, scaled by its largest
component), compared to the query's codes with SimSIMD's int8 dot product, the eligibility
mask applied before the shortlist is taken, so that a vector whose source is not eligible
never takes a place in it. The shortlist is then ranked exactly (`vector_memory`).

Chosen over an exact float32 pass and the 1-bit signatures by speed and by how much of the
exact top 10 the shortlist keeps (docs/benchmarks.md, design measurements). Without SimSIMD
the pass is exact, in float32 (numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from runtime_svc.retrieval.embedders.model import Vector

if TYPE_CHECKING:
    from numpy.typing import NDArray

    Array = NDArray[Any]

# Below this many held vectors the first pass is exact (float32): it costs no more.
EXACT_MAX = 20_000
# How far an int8 similarity may be from the exact one, with room to spare: at most 0.0028
# measured over 4 million pairs of the local model's vectors (BEAM and bench sentences
# against their questions) and of random vectors.
ERROR_MARGIN = 0.01


def _simsimd() -> Any:
    try:
        import simsimd
    except ImportError:  # the pass is then exact
        return None
    return simsimd


def quantize(vectors: Array) -> tuple[Array, Array]:
    """Int8 codes of the rows and, per row, the factor that turns a code's dot product with
    a unit query's codes into cosine similarity (1 / (scale * norm))."""

    peak = np.abs(vectors).max(axis=1)
    scale = np.float32(127) / np.where(peak > 0, peak, np.float32(1))
    codes = np.clip(np.rint(vectors * scale[:, None]), -127, 127).astype(np.int8)
    norms = np.linalg.norm(vectors, axis=1)
    factor = np.float32(1) / np.where(norms > 0, norms * scale, np.float32(1))
    return codes, factor.astype(np.float32)


def is_exact(rows: int, codes: Array | None) -> bool:
    """Whether `similarities` of `rows` held vectors are exact (else by their int8 codes, in
    an order close to the exact one but not the same)."""
    return codes is None or rows <= EXACT_MAX or _simsimd() is None


def similarities(codes: Array | None, factor: Array | None, vectors: Array, query: Vector) -> Array:
    """Every held vector's (approximate, with codes) cosine similarity to the query."""

    q = np.asarray(query, np.float32)
    norm = float(np.linalg.norm(q)) or 1.0
    simd = _simsimd()
    if is_exact(len(vectors), codes) or factor is None or simd is None:
        out: Array = np.einsum("ij,j->i", vectors, q) / np.float32(norm)
        norms = np.linalg.norm(vectors, axis=1)
        return out / np.where(norms > 0, norms, np.float32(1))
    q_codes, q_factor = quantize(q[None, :])
    dots = np.asarray(simd.cdist(q_codes, codes, metric="dot", threads=1), np.float32)[0]
    found: Array = dots * factor * q_factor[0]
    return found


def shortlist(similarity: Array, ok: Array | None, n: int) -> Array:
    """The positions of the `n` most similar rows among those `ok` (eligible); all of them
    when there are no more."""

    masked = similarity if ok is None else np.where(ok, similarity, -np.inf)
    eligible = len(masked) if ok is None else int(ok.sum())
    if eligible <= n:
        return np.flatnonzero(ok) if ok is not None else np.arange(len(masked))
    return np.argpartition(-masked, n - 1)[:n]
