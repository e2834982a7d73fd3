"""The paraphrase sets of `make bench` keep their promise: no content word in common
between a memory and its question, and the blind held-back set is new material."""

from __future__ import annotations

from bench import paraphrase
from bench.paraphrase_heldback import (
    HELD_BACK_V2_DISTRACTORS,
    HELD_BACK_V2_PAIRS,
    heldback_store,
)


def test_no_pair_shares_a_content_word() -> None:
    for memory, question in paraphrase.PAIRS + HELD_BACK_V2_PAIRS:
        assert paraphrase.shared_words(memory, question) == set(), (memory, question)


def test_shared_words_sees_a_stem_in_common() -> None:
    assert paraphrase.shared_words("I adopted two cats", "which cat did I adopt") == {
        "adopt",
        "cat",
    }


def test_heldback_set_is_new_and_large_enough() -> None:
    old = {m for m, _ in paraphrase.PAIRS} | set(paraphrase.distractors())
    old_questions = {q for _, q in paraphrase.PAIRS}
    assert len(HELD_BACK_V2_PAIRS) >= 48
    assert len(HELD_BACK_V2_DISTRACTORS) >= 100
    assert not {m for m, _ in HELD_BACK_V2_PAIRS} & old
    assert not {q for _, q in HELD_BACK_V2_PAIRS} & old_questions
    assert not set(HELD_BACK_V2_DISTRACTORS) & old
    store = heldback_store()
    assert len(store) == len(set(store))
