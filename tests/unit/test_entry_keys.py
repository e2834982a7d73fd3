"""An index entry's key packs its source and passage (`domain.entry_keys`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime_svc.domain import entry_keys
from runtime_svc.domain.passages import Range

ranges = st.one_of(
    st.none(),
    st.tuples(st.integers(0, 262_143), st.integers(0, 53)).map(lambda t: Range(t[0], t[0] + t[1])),
)


@settings(deadline=None)  # a loaded machine: no timing in unit tests
@given(st.integers(1, 2**38), ranges)
def test_a_key_gives_back_its_source_and_range(pk, rng) -> None:
    key = entry_keys.entry_key(pk, rng)
    assert entry_keys.source_pk(key) == pk
    assert entry_keys.range_of(key) == rng
    assert entry_keys.with_passage(pk, entry_keys.passage(key)) == key
    span = entry_keys.key_range(pk)
    assert span.first <= key <= span.last
    assert entry_keys.source_pk(span.first) == entry_keys.source_pk(span.last) == pk
    assert entry_keys.source_pk(span.last + 1) == pk + 1


def test_a_session_of_thousands_of_messages_keys_every_passage() -> None:
    rng = Range(199_998, 200_000)
    key = entry_keys.entry_key(7, rng)
    assert entry_keys.range_of(key) == rng and entry_keys.source_pk(key) == 7
    assert key < 2**63
