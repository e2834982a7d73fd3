"""The soak's texts keep their promises: a probe's question shares no content word with
anything the soak writes but its own memory's meaning, and every turn's id word is its own
and is read back from the stored message."""

from __future__ import annotations

import random

from agentmem.v1 import retrieval_pb2
from bench.soak_figures import Figures
from bench.soak_meaning import covers
from bench.soak_texts import FILLER, PROBES, everyday, probe_turn, turn_id, turn_ids, turn_word
from runtime_svc.domain.text import query_terms


def stems(text: str) -> set[str]:
    return {t.stem for t in query_terms(text)}


def test_no_question_shares_a_word_with_what_the_soak_writes_around_its_memory():
    rng = random.Random(0)
    written = set()
    for n in range(200):
        for m in everyday(turn_word(n), rng):
            written |= stems(m["content"])
    probe = PROBES[0]
    written |= stems(probe_turn(turn_word(1), probe)[1]["content"]) - stems(probe.memory)
    for p in PROBES:
        assert not stems(p.question) & written, p.question


def test_turn_words_are_distinct_and_read_back():
    words = [turn_word(n) for n in range(5000)]
    assert len(set(words)) == len(words)
    assert len({next(iter(stems(w))) for w in words}) == len(words)  # also after stemming
    turn = everyday(words[42], random.Random(1)) + probe_turn(words[43], PROBES[3])
    assert turn_ids([m["content"] for m in turn]) == [words[42], words[43]]
    assert turn_id("so the kite and the river") is None
    assert all(w not in FILLER for w in words)


def test_a_probe_is_found_only_by_a_passage_holding_its_message():
    def hit(source: str, start: int, end: int) -> retrieval_pb2.SearchHit:
        return retrieval_pb2.SearchHit(
            source_id=source,
            passage=retrieval_pb2.Passage(message_start=start, message_end=end),
        )

    assert covers([hit("a", 0, 1), hit("b", 6, 7)], "b", 6)
    assert covers([hit("b", 5, 6)], "b", 6)
    assert not covers([hit("b", 7, 8), hit("a", 6, 7)], "b", 6)
    assert covers([retrieval_pb2.SearchHit(source_id="m")], "m", None)


def test_compare_and_swap_races_are_not_errors():
    codes = {
        "append OK": 10,
        "append FAILED_PRECONDITION/REVISION_MISMATCH": 7,
        "search UNAVAILABLE": 1,
    }
    from collections import Counter

    f = Figures("append", "SQLite", "hybrid", 2, 1.0, "appends", 10, [], Counter(codes))
    assert f.errors == 1
