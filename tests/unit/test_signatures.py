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
