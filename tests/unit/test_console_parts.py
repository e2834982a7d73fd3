"""A conversation's parts by whose they are (agentmem.console.parts): grouped by insert and
append, each with its messages as the page shows them, and folded part by part when long."""

from __future__ import annotations

from agentmem.console import parts, turns
from agentmem.v1 import retrieval_pb2, sources_pb2


def conversation(n: int) -> list[sources_pb2.Message]:
    return [sources_pb2.Message(role="user", content=f"turn {i}") for i in range(n)]


def appended(first: int, count: int, by: str = "agent") -> sources_pb2.AppendedTurn:
    return sources_pb2.AppendedTurn(
        first_message=first, message_count=count, appended_by=by, appender_kind="agent"
    )


def test_a_short_conversation_shows_every_part_with_its_numbered_turns() -> None:
    shown = parts.parts(conversation(4), [appended(2, 1), appended(3, 1, "bob")], "alice")
    assert [(p.by, p.appended, p.places) for p in shown] == [
        ("alice", False, "messages 1 to 2"),
        ("agent", True, "message 3"),
        ("bob", True, "message 4"),
    ]
    assert [t.number for p in shown for t in p.lines] == [1, 2, 3, 4]


def test_a_long_session_folds_the_parts_between_its_ends() -> None:
    # 2 inserted, then 40 appends of one turn each: an agent's session
    shown = parts.parts(conversation(42), [appended(i, 1) for i in range(2, 42)], "alice")
    folds = [p for p in shown if isinstance(p, parts.PartFold)]
    assert len(folds) == 1
    open_parts = [p for p in shown if isinstance(p, parts.Part)]
    assert [p.first for p in open_parts] == [0, 39, 40, 41]  # the insert, the last three turns
    assert folds[0].places == "messages 3 to 39"
    assert sum(p.count for p in folds[0].parts) + sum(p.count for p in open_parts) == 42


def test_the_matched_passage_keeps_its_part_and_neighbours_open_and_marked() -> None:
    passage = retrieval_pb2.Passage(message_start=20, message_end=20)
    shown = parts.parts(
        conversation(42), [appended(i, 1) for i in range(2, 42)], "alice", passage=passage
    )
    open_firsts = [p.first for p in shown if isinstance(p, parts.Part)]
    assert {19, 20, 21} <= set(open_firsts)
    (matched,) = [t for p in shown if isinstance(p, parts.Part) for t in p.lines if t.matched]
    assert matched.number == 21 and matched == turns.turn(20, conversation(42)[20], passage)


def test_without_the_content_scope_the_parts_still_say_whose_they_are() -> None:
    shown = parts.parts([], [appended(2, 1)], "alice")
    assert [(p.by, p.count, p.lines) for p in shown] == [("alice", 2, ()), ("agent", 1, ())]


def test_the_append_that_held_the_conversation_stays_open_in_a_long_one() -> None:
    held = sources_pb2.AppendedTurn(
        first_message=20, message_count=1, appended_by="agent", appender_kind="agent", held=True
    )
    others = [appended(i, 1) for i in range(2, 42) if i != 20]
    shown = parts.parts(
        conversation(42), sorted([*others, held], key=lambda t: t.first_message), "alice"
    )
    (open_held,) = [p for p in shown if isinstance(p, parts.Part) and p.held]
    assert open_held.first == 20
