"""Answers read from passages: the sentence that says most of what was asked (its rare
words counting most), the user's own before the assistant's, nothing below the threshold."""

from __future__ import annotations

from runtime_svc.domain.passage_answers import Said, best, candidates, passage_first

SESSION = [
    Said(0, 0, True, "I'm starting a storefront project. The project is called Shopwise."),
    Said(0, 1, False, "Tell me about the project and its deadline."),
    Said(1, 2, True, "We must ship by March 14, the launch date is fixed."),
    Said(1, 3, False, "Then the catalogue goes first. Which bakery comes first?"),
]


def answer(question: str, said=SESSION, similarity=None) -> str | None:  # type: ignore[no-untyped-def]
    found = best(question, candidates(said), similarity)
    return found.sentence.text if found else None


def test_the_rare_word_of_the_question_decides():
    assert answer("when must the project ship") == (
        "We must ship by March 14, the launch date is fixed."
    )


def test_the_users_sentence_answers_before_the_assistants():
    assert answer("what is the project called") == "The project is called Shopwise."


def test_a_question_nothing_says_is_not_answered_and_questions_do_not_answer():
    assert answer("what is the capital of Australia") is None
    assert answer("which bakery") is None  # only the assistant's question says it


def test_a_reply_is_read_with_the_question_it_answers():
    said = [
        Said(0, 6, False, "Which instrument did your grandmother leave you?"),
        Said(
            0,
            7,
            True,
            "She left me her old zqcello.",
            "Which instrument did your grandmother leave you?",
        ),
    ]
    assert answer("zqcello grandmother", said) == "She left me her old zqcello."


def test_meaning_lifts_a_sentence_words_alone_leave_below_the_threshold():
    said = [Said(0, 0, True, "Stripe sends events to /api/stripe/events."), Said(0, 1, True, "Hi.")]
    assert answer("where do payment notifications go", said) is None
    assert answer("where do payment notifications go", said, [0.95, 0.1]) == (
        "Stripe sends events to /api/stripe/events."
    )


def test_a_sentence_answers_before_facts_only_when_it_says_more_of_the_question():
    said = [Said(0, 0, True, "We write tests with pytest.")]
    found = best("what do we write tests with", candidates(said))
    assert found is not None
    assert passage_first("what do we write tests with", found, ["The user uses SQLite for tests"])
    assert not passage_first(
        "what do we write tests with", found, ["The user writes tests with pytest"]
    )
