"""The interval chain of one attribute, as a pure function of its statements."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.domain.fact_chains import NONE, Link, Statement, chain, current_at


def s(fact_id, value, t, seq=None, **kw):  # type: ignore[no-untyped-def]
    return Statement(fact_id, value, t, seq if seq is not None else t, **kw)


def test_a_new_value_closes_the_open_interval_at_its_time():
    links = chain([s("a", "lisbon", 0, source_id="x"), s("b", "berlin", 10, source_id="y")])
    assert links == {
        "a": Link(True, 10, "b", "y"),
        "b": Link(True, supersedes="a"),
    }


def test_order_is_time_then_storage_order_not_the_order_given():
    late = [s("c", "porto", 5, seq=3), s("b", "berlin", 10, seq=2), s("a", "lisbon", 0, seq=1)]
    links = chain(late)
    assert (links["a"].superseded_by, links["c"].superseded_by, links["b"].valid_to_us) == (
        "c",
        "b",
        0,
    )
    tie = chain([s("x", "one", 7, seq=2), s("y", "two", 7, seq=1)])
    assert tie["y"].superseded_by == "x" and tie["x"].opens and not tie["x"].valid_to_us


def test_a_restatement_opens_nothing_and_an_end_closes_only_its_value():
    links = chain(
        [
            s("a", "lisbon", 0),
            s("b", "lisbon", 5),  # restates
            s("c", "porto", 6, ends=True),  # ends a value that is not current: no effect
            s("d", "lisbon", 8, ends=True),
            s("e", "berlin", 9),
        ]
    )
    assert links["b"] == links["c"] == links["d"] == NONE
    assert links["a"] == Link(True, 8, "d")
    assert links["e"] == Link(True, supersedes="a")


def test_statements_that_are_not_live_take_no_part():
    links = chain([s("a", "lisbon", 0), s("b", "berlin", 10, live=False), s("c", "porto", 20)])
    assert links["b"] == NONE
    assert links["a"] == Link(True, 20, "c") and links["c"] == Link(True, supersedes="a")
    assert chain([s("a", "lisbon", 0, live=False)]) == {"a": NONE}


statements = st.lists(
    st.builds(
        Statement,
        fact_id=st.uuids().map(str),
        value=st.sampled_from(["lisbon", "berlin", "porto"]),
        valid_from_us=st.integers(1, 50),
        seq=st.integers(0, 1000),
        ends=st.booleans(),
        live=st.booleans(),
    ),
    max_size=12,
    unique_by=lambda x: x.fact_id,
)


@given(statements, st.integers(-1, 60))
def test_at_any_time_at_most_one_value_is_current_and_it_is_the_latest_live_statement(
    given_statements, at_us
):
    links = chain(given_statements)
    current = [x for x in given_statements if current_at(links[x.fact_id], x.valid_from_us, at_us)]
    assert len(current) <= 1
    live = sorted(
        (x for x in given_statements if x.live and x.valid_from_us <= at_us),
        key=lambda x: (x.valid_from_us, x.seq, x.fact_id),
    )
    value = None  # replay: the latest live statement decides, an end of the value clears it
    for x in live:
        if not x.ends:
            value = x.value
        elif value == x.value:
            value = None
    assert [x.value for x in current] == ([value] if value else [])
    # Intervals do not overlap and each closed one ends where its closer starts.
    opened = sorted(
        (x for x in given_statements if links[x.fact_id].opens),
        key=lambda x: (x.valid_from_us, x.seq, x.fact_id),
    )
    by_id = {x.fact_id: x for x in given_statements}
    for a, b in itertools.pairwise(opened):
        assert links[a.fact_id].valid_to_us and links[a.fact_id].valid_to_us <= b.valid_from_us
    for x in opened:
        link = links[x.fact_id]
        if link.superseded_by:
            assert by_id[link.superseded_by].valid_from_us == link.valid_to_us
