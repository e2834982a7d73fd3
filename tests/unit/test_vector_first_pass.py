"""The semantic side's compressed first pass (int8 codes, the eligibility mask applied before
the shortlist is taken) against the exact ranking, on small random tenants whose entries
change eligibility, lose vectors and gain new ones between searches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, update

from runtime_svc.domain.entry_keys import with_passage
from runtime_svc.retrieval.vectors import quantized
from runtime_svc.retrieval.vectors.signatures import Signatures
from runtime_svc.storage.models import SearchPosting, TenantState
from tests.unit.test_signatures import _insert, _vector_rows, _vectors_table

K = 5
SHORTLIST = 4 * K
DIMENSION = 48


def _exact_top(conn, table, query, k: int) -> list[int]:  # type: ignore[no-untyped-def]
    """The exact top k of the tenant's eligible vectors (seqs), by cosine similarity."""
    p = SearchPosting.__table__
    eligible = {r.pk for r in conn.execute(p.select().where(p.c.term == "", p.c.eligible == 1))}
    rows = [
        r for r in conn.execute(table.select()) if with_passage(r.source_pk, r.passage) in eligible
    ]
    q = np.asarray(query, np.float32)
    scored = []
    for r in rows:
        v = np.frombuffer(r.embedding, np.float32)
        scored.append((-float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))), r.seq))
    return [seq for _, seq in sorted(scored)[:k]]


def _first_pass_top(held: Signatures, conn, query, k: int) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
    """The shortlist, and its top k ranked exactly."""
    near = held.nearest(conn, "t", "m", query, SHORTLIST)
    if not len(near.seqs):  # every vector erased: nothing held, nothing proposed
        return [], []
    assert near.vectors is not None
    q = np.asarray(query, np.float32)
    sims = near.vectors @ q / (np.linalg.norm(near.vectors, axis=1) * np.linalg.norm(q))
    order = np.lexsort((near.seqs, -sims))
    return near.seqs.tolist(), near.seqs[order[:k]].tolist()


def _stamp(conn, pks: list[int], eligible: bool, stamp: int) -> None:  # type: ignore[no-untyped-def]
    p, s = SearchPosting.__table__, TenantState.__table__
    conn.execute(
        update(p)
        .where(p.c.term == "", p.c.pk.in_([with_passage(pk, 0) for pk in pks]))
        .values(eligible=int(eligible), stamp=stamp)
    )
    if conn.execute(s.select()).first() is None:
        conn.execute(s.insert().values(tenant_id="t", index_stamp=stamp))
    conn.execute(update(s).values(index_stamp=stamp))


@pytest.fixture(autouse=True)
def _int8_always(monkeypatch):  # type: ignore[no-untyped-def]
    """Small tenants take the int8 pass too (it is exact below `EXACT_MAX` otherwise)."""
    monkeypatch.setattr(quantized, "EXACT_MAX", 0)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 120),
    cold=st.lists(st.integers(1, 120), max_size=40),
    warm=st.lists(st.integers(1, 120), max_size=10),
    erased=st.lists(st.integers(1, 120), max_size=10),
    added=st.integers(0, 30),
)
def test_the_first_pass_keeps_the_exact_top_k_and_no_ineligible_vector(
    seed, size, cold, warm, erased, added
):
    engine, table = _vectors_table()
    rng = np.random.default_rng(seed)
    held = Signatures()
    with engine.begin() as conn:
        _insert(conn, _vector_rows("t", size, rng, DIMENSION))
        queries = [rng.standard_normal(DIMENSION).tolist() for _ in range(3)]
        for query in queries:
            shortlist, top = _first_pass_top(held, conn, query, K)
            assert top == _exact_top(conn, table, query, K)
        # Sources made cold (then some warm again), revoked or erased (their vectors and
        # entries gone), new ones stored: the held rows follow, and only eligible vectors
        # take shortlist places.
        _stamp(conn, cold, False, 1)
        _stamp(conn, warm, True, 2)
        p = SearchPosting.__table__
        conn.execute(delete(table).where(table.c.source_pk.in_(erased)))
        conn.execute(delete(p).where(p.c.pk.in_([with_passage(pk, 0) for pk in erased])))
        _stamp(conn, [], True, 3)
        _insert(conn, _vector_rows("t", added, rng, DIMENSION, first_pk=1000))
        not_eligible = {
            r.seq
            for r in conn.execute(table.select())
            if (r.source_pk in cold and r.source_pk not in warm)
        }
        present = {r.seq for r in conn.execute(table.select())}
        for query in queries:
            shortlist, top = _first_pass_top(held, conn, query, K)
            assert not set(shortlist) & not_eligible
            assert set(shortlist) <= present
            assert top == _exact_top(conn, table, query, K)
