"""The soak's checks (`bench.soak_checks`): the compare-and-swap history checker refuses
histories that are not linearizable; the turn checker finds a turn acknowledged but lost,
stored twice, out of order, or stored though refused; the log checker finds an error loop."""

from __future__ import annotations

from bench.soak_checks import (
    Ack,
    CasOp,
    check_linearizable,
    check_turns,
    log_problems,
    percentile,
)


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


# The append soak's checks: acknowledged turns against the stored conversations.


def acks(conversation, *turns, first=1):  # type: ignore[no-untyped-def]
    return {t: Ack(conversation, first + i) for i, t in enumerate(turns)}


def test_turns_stored_once_in_order_pass():
    assert check_turns(acks("c", "a", "b", "c3"), {}, {"c": ["a", "b", "c3"]}) == []


def test_a_lost_turn_is_caught():
    problems = check_turns(acks("c", "a", "b", "c3"), {}, {"c": ["a", "c3"]})
    assert any("turn b (revision 2) lost" in p for p in problems)


def test_a_turn_stored_twice_is_caught():
    problems = check_turns(acks("c", "a", "b"), {}, {"c": ["a", "b", "b"]})
    assert any("stored 2 times" in p for p in problems)


def test_turns_out_of_order_are_caught():
    problems = check_turns(acks("c", "a", "b", "c3"), {}, {"c": ["a", "c3", "b"]})
    assert any("turn b (revision 2) stored as turn 3" in p for p in problems)


def test_a_turn_in_another_conversation_is_lost_there():
    problems = check_turns(acks("c", "a", "b"), {}, {"c": ["a"], "d": ["b"]})
    assert any("c: turn b (revision 2) lost" in p for p in problems)
    assert any("d: turn b of c stored" in p for p in problems)


def test_a_refused_turn_that_was_stored_is_caught():
    problems = check_turns(acks("c", "a"), {}, {"c": ["a", "x"]})
    assert problems == ["c: turn x stored but never acknowledged"]


def test_a_revision_acknowledged_twice_is_caught():
    acked = {"a": Ack("c", 1), "b": Ack("c", 2), "x": Ack("c", 2)}
    problems = check_turns(acked, {}, {"c": ["a", "b", "x"]})
    assert any("revision 2 acknowledged to b and x" in p for p in problems)


def test_a_turn_in_doubt_may_be_stored_once_or_not_at_all():
    acked = acks("c", "a", "b")
    assert check_turns(acked, {"x": "c"}, {"c": ["a", "b"]}) == []
    # stored: it took revision 3, the next acknowledged turn is revision 4
    acked["y"] = Ack("c", 4)
    assert check_turns(acked, {"x": "c"}, {"c": ["a", "b", "x", "y"]}) == []
    twice = check_turns(acks("c", "a"), {"x": "c"}, {"c": ["a", "x", "x"]})
    assert twice == ["c: turn x (in doubt) stored 2 times"]


def test_a_missing_conversation_loses_its_turns():
    problems = check_turns(acks("c", "a", "b"), {}, {})
    assert len(problems) == 2


# The runtime's log: a few warnings pass, an error loop fails.


def line(msg, level="warning", logger="agentmem.runtime"):  # type: ignore[no-untyped-def]
    return {"level": level, "logger": logger, "msg": msg}


def test_a_quiet_log_passes():
    records = [line("call", "info")] * 100 + [line("the model loaded slowly")]
    assert log_problems(records) == []


def test_a_repeated_warning_is_an_error_loop():
    records = [line("checkpoint failed")] * 3
    assert log_problems(records) == ["repeated 3 times: agentmem.runtime: checkpoint failed"]


def test_too_many_warnings_fail():
    records = [line(f"warning {i}") for i in range(6)]
    assert log_problems(records, max_warnings=5) == ["6 lines at warning or above (at most 5)"]


def test_embedding_failures_fail_when_repeated():
    one = [line("embedding a source failed; it will be tried again")]
    assert log_problems(one) == []
    two = [*one, line("embedding a source failed; set aside", "error")]
    assert log_problems(two) == ["2 failures to embed logged"]


def test_percentile_is_the_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile([3.0], 99) == 3
    assert percentile([], 50) != percentile([], 50)  # NaN
