"""How the console shows conversations and explanations: long ones folded around their first,
last and matched turns; a passage's excerpt with the query's words marked; what found a
source and its score's parts."""

from __future__ import annotations

from agentmem.console import excerpts, explained, turns
from agentmem.v1 import retrieval_pb2, sources_pb2

BY = retrieval_pb2.MatchedBy


def _messages(n: int) -> list[sources_pb2.Message]:
    return [sources_pb2.Message(role="user", content=f"turn {i}") for i in range(n)]


def _numbers(items: list[turns.Turn | turns.Fold]) -> list[object]:
    return [[t.number for t in i.turns] if isinstance(i, turns.Fold) else i.number for i in items]


def test_a_short_conversation_is_shown_whole() -> None:
    assert _numbers(turns.shown(_messages(turns.SHORT))) == list(range(1, turns.SHORT + 1))


def test_a_long_conversation_folds_around_its_ends_and_its_matched_turns() -> None:
    passage = retrieval_pb2.Passage(message_start=249, message_end=250)
    items = turns.shown(_messages(500), passage)
    assert _numbers(items) == [
        *[1, 2, list(range(3, 249))],
        *[249, 250, 251, 252],  # the matched turns (250, 251) with one on each side
        *[list(range(253, 498)), 498, 499, 500],
    ]
    assert [t.number for t in items if isinstance(t, turns.Turn) and t.matched] == [250, 251]


def test_one_turn_between_kept_ones_is_shown_not_folded() -> None:
    passage = retrieval_pb2.Passage(message_start=4, message_end=4)  # keeps turns 4 to 6
    assert _numbers(turns.shown(_messages(13), passage)) == [
        *[1, 2, 3, 4, 5, 6],  # 3 alone between 2 and 4: shown
        *[[7, 8, 9, 10], 11, 12, 13],
    ]


def test_a_part_of_a_long_message_is_marked_by_its_characters() -> None:
    m = sources_pb2.Message(role="assistant", content="aaaa<b>BBBB</b>cccc")
    t = turns.turn(0, m, retrieval_pb2.Passage(char_start=4, char_end=15))
    assert t.pieces == (("aaaa", False), ("<b>BBBB</b>", True), ("cccc", False)) and t.matched


def test_a_passage_in_an_address_is_parsed_strictly() -> None:
    assert turns.parse("12-13") == retrieval_pb2.Passage(message_start=12, message_end=13)
    assert turns.parse("3-3:10-20").char_end == 20
    for bad in ("", "13-12", "1-2:5-9", "x", "1-2-3", "3-3:20-10"):
        assert turns.parse(bad) is None


def test_where_names_messages_one_based() -> None:
    assert turns.where(retrieval_pb2.Passage(message_start=12, message_end=13)) == (
        "messages 13 to 14"
    )
    assert turns.where(retrieval_pb2.Passage(message_start=2, message_end=2)) == "message 3"
    part = retrieval_pb2.Passage(message_start=1, message_end=1, char_start=1200, char_end=2400)
    assert turns.where(part) == "message 2, characters 1,201 to 2,400"


def test_an_excerpt_marks_the_query_words_around_the_first_one() -> None:
    text = "word " * 200 + "the Mallet case holds mallets " + "word " * 200
    pieces = excerpts.excerpt(text, excerpts.pattern("where are my mallets?"))
    shown = "".join(p for p, _ in pieces)
    assert len(shown) <= excerpts.CHARS + 2 and shown.startswith("…") and shown.endswith("…")
    assert [p for p, marked in pieces if marked] == ["Mallet", "mallets"]
    assert excerpts.excerpt("short", None) == (("short", False),)


def test_matched_by_and_score_parts_say_what_found_a_source() -> None:
    words_only = retrieval_pb2.ExplanationEntry(rank=1, score=3.2)
    assert explained.matched_by(words_only) == "matched by its words"
    assert explained.score_parts(words_only) == "BM25 of its words"
    both = retrieval_pb2.ExplanationEntry(
        rank=2, score=0.61, matched_by=BY.MATCHED_BY_BOTH, lexical_score=0.5, semantic_score=0.68
    )
    assert explained.matched_by(both) == "matched by its words and its meaning"
    assert explained.score_parts(both) == "words 0.500 · meaning 0.680, fused"
    meaning = retrieval_pb2.ExplanationEntry(rank=3, matched_by=BY.MATCHED_BY_SEMANTIC)
    assert explained.matched_by(meaning) == "matched by its meaning"
    held = retrieval_pb2.ExplanationEntry(reason=retrieval_pb2.REASON_PENDING_REVIEW)
    assert explained.matched_by(held) == "held for review; matched by its words"
    assert explained.score_parts(held) == ""
