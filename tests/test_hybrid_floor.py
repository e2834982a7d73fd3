"""The semantic side's two floors, through real servers with the real local model: an
absolute one (`retrieval.min_similarity`) low enough that a short question in other words
finds its memory, and one relative to the query's best eligible match
(`retrieval.similarity_margin`) that keeps a query with a close match from taking in what is
merely above the absolute floor."""

from __future__ import annotations

import pytest

from tests.hybrid_support import hybrid_settings, wait_embedded
from tests.memory_helpers import assemble, insert, search_ids

SQUIER = "I have a yellow Squier Tele with a black pickguard"
SHOP = "The deadline for the guitar shop website is next Friday"
OTHERS = ("My sister lives in Lisbon", "I prefer tea over coffee", "Our dog is called Pepper")


@pytest.fixture
def stack(local_model, vector_backend, make_stack):  # type: ignore[no-untyped-def]
    def make(**more: object):  # type: ignore[no-untyped-def]
        client = make_stack(**hybrid_settings(**more)).client()
        ids = {text: insert(client, text).source_id for text in (SQUIER, SHOP, *OTHERS)}
        wait_embedded(client)
        return client, ids

    return make


@pytest.mark.parametrize(
    "question",
    [
        "do I play guitar",  # cosine 0.136 to the Squier with all-MiniLM-L6-v2
        "which instrument do I play",  # 0.188
    ],
)
def test_a_short_question_in_other_words_finds_its_memory(stack, question):
    client, ids = stack()
    found = search_ids(client, question)
    assert ids[SQUIER] in found
    # and nothing about something else comes with it (all three others are under 0.125)
    assert not {ids[t] for t in OTHERS} & set(found)
    assert ids[SQUIER] in [c.source_id for c in assemble(client, question).citations]


def test_a_close_match_keeps_the_merely_similar_out(stack):
    # The Squier is 0.79 from this question; the shop (0.195) and the dog (0.175) are above
    # the absolute floor but further than the margin (0.3) below the best match.
    question = "my yellow Squier Telecaster with the black pickguard"
    client, ids = stack()
    assert search_ids(client, question) == [ids[SQUIER]]

    # with no relative floor they come in by meaning alone
    client, ids = stack(retrieval__similarity_margin=2.0)
    found = search_ids(client, question)
    assert found[0] == ids[SQUIER]
    assert {ids[SHOP], ids["Our dog is called Pepper"]} <= set(found)
