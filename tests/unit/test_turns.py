"""A conversation's turns and whose each is (`runtime_svc.domain.turns`): how many messages
each append added, and what erasing one principal's appended turns leaves."""

from __future__ import annotations

from runtime_svc.domain.sources import Message
from runtime_svc.domain.turns import TurnRecord, attributed, erase_appended

MESSAGES = tuple(Message("user", f"m{i}") for i in range(7))
# Inserted: m0, m1. Then agent m2; alice m3, m4; agent m5; bob m6.
RECORDS = [
    TurnRecord(5, 4, "agent", "agent"),  # out of order: sorted by place
    TurnRecord(2, 2, "agent", "agent"),
    TurnRecord(3, 3, "alice", "user"),
    TurnRecord(6, 5, "bob", "user"),
]


def test_each_append_counts_the_messages_up_to_the_next():
    turns = attributed(RECORDS, len(MESSAGES))
    assert [(t.first_message, t.message_count, t.principal_id) for t in turns] == [
        (2, 1, "agent"),
        (3, 2, "alice"),
        (5, 1, "agent"),
        (6, 1, "bob"),
    ]
    assert attributed([], 3) == ()


def test_erasing_one_principals_turns_keeps_the_insert_and_moves_the_rest_up():
    turns = attributed(RECORDS, len(MESSAGES))
    plan = erase_appended(MESSAGES, turns, "agent")
    assert [m.content for m in plan.messages] == ["m0", "m1", "m3", "m4", "m6"]
    assert [(t.principal_id, t.first_message, new) for t, new in plan.kept] == [
        ("alice", 3, 2),
        ("bob", 6, 4),
    ]
    assert (plan.turns_erased, plan.messages_erased, plan.principal_id) == (2, 2, "agent")


def test_a_principal_with_no_turn_erases_nothing():
    turns = attributed(RECORDS, len(MESSAGES))
    plan = erase_appended(MESSAGES, turns, "carol")
    assert plan.messages == MESSAGES and plan.turns_erased == 0
    assert [new for _, new in plan.kept] == [2, 3, 5, 6]


def test_erasing_the_inserters_turns_takes_the_inserted_part_and_moves_the_rest_to_zero():
    turns = attributed(RECORDS, len(MESSAGES))
    plan = erase_appended(MESSAGES, turns, "agent", inserted_by="agent")
    assert [m.content for m in plan.messages] == ["m3", "m4", "m6"]
    assert [(t.principal_id, new) for t, new in plan.kept] == [("alice", 0), ("bob", 2)]
    # The inserted part is one turn: m0, m1; and the agent's appended m2 and m5.
    assert (plan.turns_erased, plan.messages_erased, plan.inserted_erased) == (3, 4, True)
    # What is left is the others' only: attributed again, it starts at message 0.
    again = attributed(
        [TurnRecord(new, t.revision, t.principal_id, "user") for t, new in plan.kept], 3
    )
    assert [(t.first_message, t.message_count) for t in again] == [(0, 2), (2, 1)]
    # Someone else's erasure keeps the inserted part, as before.
    assert not erase_appended(MESSAGES, turns, "alice", inserted_by="agent").inserted_erased


def test_a_conversation_whose_inserted_part_went_is_its_turn_rows_joined():
    import json

    from runtime_svc.storage import turn_log

    parts = [turn_log.stored_form(MESSAGES[3:5]), turn_log.stored_form(MESSAGES[6:])]
    joined = turn_log.join(turn_log.EMPTY, parts)
    assert joined == json.dumps([m.row() for m in (*MESSAGES[3:5], MESSAGES[6])])
