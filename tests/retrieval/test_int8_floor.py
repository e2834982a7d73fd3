"""Above `quantized.EXACT_MAX` held vectors the first pass orders its shortlist by int8 codes:
close to the exact order, not the same. Near the similarity floor a vector past it can come
ahead of one within it, so a grouped search whose candidates fell to fewer sources than asked
widens its pass instead of concluding that every vector after them is past the floor too."""

from __future__ import annotations

import itertools
import time

import numpy as np

from runtime_svc.domain.passages import Window
from runtime_svc.retrieval import plan
from runtime_svc.retrieval.vectors import quantized
from runtime_svc.retrieval.vectors.signatures import Signatures
from runtime_svc.retrieval.vectors.vector_search import VectorSearch
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.retrieval.conftest import MODEL, Doc, fill, store_vectors

DIMENSION = 32
FLOOR = 0.2
TENANTS = itertools.count()


def _at(similarity: float, query: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A vector at exactly this cosine similarity to the (unit) query."""
    u = rng.standard_normal(len(query))
    u -= (u @ query) * query
    u /= np.linalg.norm(u)
    return (similarity * query + np.sqrt(1 - similarity**2) * u).astype(np.float32)


def _int8_inverted(query: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A vector just within the floor and one just past it whose int8 similarities come in
    the other order."""
    within = np.stack([_at(FLOOR + 0.0005, query, rng) for _ in range(200)])
    past = np.stack([_at(FLOOR - 0.0005, query, rng) for _ in range(200)])
    q = query.tolist()
    sims = [quantized.similarities(*quantized.quantize(m), m, q) for m in (within, past)]
    w, p = int(np.argmin(sims[0])), int(np.argmax(sims[1]))
    assert sims[1][p] > sims[0][w], "the int8 codes kept the exact order"
    return within[w], past[p]


def test_a_shortlist_in_int8_order_is_widened_not_cut_at_the_floor(database, monkeypatch):
    monkeypatch.setattr(quantized, "EXACT_MAX", 0)  # the int8 order at any size
    rng = np.random.default_rng(5)
    query = np.zeros(DIMENSION, np.float32)
    query[0] = 1.0
    within, past = _int8_inverted(query, rng)
    uow = UnitOfWork(database, window=Window())
    talk = Doc(messages=tuple((f"w{i}",) for i in range(6)))
    tenant = fill(uow, f"int8-{next(TENANTS)}", [talk, Doc(("a",)), Doc(("b",))], Window())
    pk_talk, pk_within, pk_past = tenant.entries
    vectors = {key: _at(0.9, query, rng) for key in tenant.entries[pk_talk]}
    (key_within,) = tenant.entries[pk_within]
    (key_past,) = tenant.entries[pk_past]
    vectors |= {key_within: within, key_past: past}
    store_vectors(uow, tenant, vectors)
    # A shortlist one longer than the conversation's passages: them and the vector past
    # the floor (ahead by its int8 codes), not the one within it.
    chosen = plan.VectorPlan(
        plan.Vector.COARSE, MODEL, coarse=len(tenant.entries[pk_talk]) + 1, min_similarity=FLOOR
    )
    with uow.read(tenant.tenant_id) as tx:
        search = VectorSearch(tx.conn, tenant.tenant_id, Window(), Signatures())
        search.prepare(chosen)
        got = search.search(chosen, query.tolist(), 2, int(time.time() * 1e6))
    assert [h.source_id for h in got] == [
        tenant.source_ids[pk_talk],
        tenant.source_ids[pk_within],
    ]
