"""The coarse pass's choice of the nearest signatures (pure numpy, no database)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.storage.vector_signatures import _nearest


@given(st.lists(st.integers(0, 40), min_size=2, max_size=300), st.data())
def test_the_n_smallest_distances_are_chosen_once_each(distances, data):
    n = data.draw(st.integers(1, len(distances) - 1))
    d = np.array(distances, np.uint16)
    got = _nearest(d, n)
    assert len(set(got.tolist())) == n
    assert sorted(d[got].tolist()) == sorted(distances)[:n]


def test_a_proposal_computed_ahead_is_what_the_search_would_find_and_is_dropped_when_stale():
    from sqlalchemy import create_engine, insert

    from runtime_svc.domain.embeddings import signature
    from runtime_svc.storage.models import MemoryVectorRow
    from runtime_svc.storage.vector_signatures import Signatures

    table = MemoryVectorRow.__table__
    engine = create_engine("sqlite://")
    table.create(engine)
    rng = np.random.default_rng(7)
    rows = [
        {
            "passage": 0,
            "source_pk": i,
            "model_id": "m",
            "tenant_id": "t",
            "source_id": f"s{i}",
            "source_revision": 1,
            "dimension": 64,
            "embedding": b"",
            "signature": signature(rng.standard_normal(64).tolist()),
            "created_at_us": 1,
        }
        for i in range(1, 301)
    ]
    query = signature(rng.standard_normal(64).tolist())
    with engine.begin() as conn:
        conn.execute(insert(table), rows)
        fresh = Signatures()
        expected, last = fresh.nearest(conn, "t", "m", query, 20)
        held = Signatures()
        held.refresh(conn, "t", "m")
        held.propose("t", "m", query, 20)
        assert held.nearest(conn, "t", "m", query, 20, last) == (expected, last)
        assert not held._proposals  # taken
        held.propose("t", "m", query, 20)
        held.forget("t", "m", expected[:1])  # what is held changed: computed again
        again, _ = held.nearest(conn, "t", "m", query, 20, last)
        assert expected[0] not in again and len(again) == 20
        held.propose("another tenant", "m", query, 20)  # not held: nothing computed
        assert not held._proposals
