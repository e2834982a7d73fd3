"""The answer's words in the block, as the BEAM and LoCoMo benches count them
(`bench.answer_words`)."""

from __future__ import annotations

from bench.answer_words import carries, key_words, rubric_items, words


def test_case_and_punctuation_do_not_matter() -> None:
    assert carries("user: my DENTIST is dr. hansen!", ["Dr Hansen, dentist"])
    assert key_words("Dr. Hansen's") == key_words("dr hansen s")


def test_numbers_keep_their_digits() -> None:
    assert words("1,200 calls; v0.6.2; 250ms; 4/52; 65%") == [
        "1200", "calls", "v", "0.6.2", "250", "ms", "4", "52", "65",
    ]  # fmt: skip
    assert carries("about 1200 calls per day", ["1,200 calls per day"])
    assert carries("now 250 ms on average", ["250ms"])
    assert not carries("1,300 calls a day", ["1,200 calls"])
    assert not carries("version 0.6", ["0.6.2"])


def test_number_words_and_month_names_read_as_digits_and_full_names() -> None:
    assert carries("we added 3 endpoints", ["Three endpoints"])
    assert carries("due Apr 30, 2024", ["April 30, 2024"])
    assert carries("sprint ends on March 29", ["Mar 29"])


def test_stop_words_and_stems() -> None:
    assert key_words("You said you completed the drafts") == ["complet", "draft"]
    assert carries("I've completed my first draft", ["You said you completed your first draft"])


def test_three_quarters_of_a_long_item_and_all_of_a_short_one() -> None:
    item = "integrating frontend with backend in the second week"  # 5 key words: 4 needed
    assert carries("frontend and backend integrated in week 2", [item])
    assert not carries("frontend and backend in week 3", [item])
    assert not carries("sprint ends on March 30", ["March 29"])  # 2 key words: both
    assert not carries("role-based access", ["password hashing", "role-based access control"])


def test_every_item_is_needed() -> None:
    items = ["category", "notes"]
    assert carries("columns: category, notes", items)
    assert not carries("columns: category", items)


def test_answers_of_stop_words_only_are_skipped() -> None:
    assert carries("anything at all", ["Yes"]) is None
    assert carries("anything at all", ["No, none.", "..."]) is None
    assert carries("anything at all", []) is None


def test_stems_may_be_given_instead_of_the_text() -> None:
    from bench.answer_words import stems

    assert carries(
        stems("Laura met me at Blue Horizon Studios in 2019"), ["Blue Horizon Studios in 2019"]
    )


def test_rubric_items_lose_their_prefix_and_the_conduct_items() -> None:
    rubric = [
        "LLM response should state: there is contradictory information",
        "LLM response should mention: You said you have an API key",
        "LLM response should mention: which statement is correct?",
        "seek additional trusted opinions",
        "LLM response should contain: code blocks",
    ]
    assert rubric_items(rubric) == [
        "You said you have an API key",
        "seek additional trusted opinions",
        "code blocks",
    ]
