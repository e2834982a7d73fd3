"""The soak's compare-and-swap history checker refuses histories that are not linearizable."""

from __future__ import annotations

from bench.soak import CasOp, check_linearizable


def op(start, end, expected, outcome, revision, key="k"):  # type: ignore[no-untyped-def]
    return CasOp(key, start, end, expected, outcome, revision)


def test_a_clean_history_is_linearizable():
    history = [
        op(0, 1, 0, "ok", 1),
        op(0.5, 2, 0, "mismatch", 1),
        op(2, 3, 1, "ok", 2),
        op(2.5, 4, 1, "unknown", -1),
        op(5, 6, 3, "ok", 4),  # revision 3 came from the in-doubt call
    ]
    assert check_linearizable(history, {}) == []


def test_a_revision_granted_twice_is_caught():
    assert check_linearizable([op(0, 1, 0, "ok", 1), op(2, 3, 0, "ok", 1)], {})


def test_real_time_order_is_enforced():
    assert check_linearizable([op(0, 1, 1, "ok", 2), op(2, 3, 0, "ok", 1)], {})


def test_a_stale_mismatch_is_caught():
    history = [op(0, 1, 0, "ok", 1), op(1, 2, 1, "ok", 2), op(3, 4, 0, "mismatch", 1)]
    assert check_linearizable(history, {})


def test_a_gap_without_in_doubt_calls_is_caught():
    assert check_linearizable([op(0, 1, 2, "ok", 3)], {"k": 1})
