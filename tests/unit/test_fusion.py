"""The fusion formula itself (pure domain, no servers): what each side contributes, how a
partial lexical match is discounted, and that any keys (sources, passages) can be fused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.domain.query import Query
from runtime_svc.retrieval import fusion
from runtime_svc.retrieval.fusion import MatchedBy, Weights, fuse

W = Weights()  # the runtime's defaults
keys = st.sampled_from([f"k{i}" for i in range(8)])
bm25 = st.floats(min_value=0.01, max_value=50)
cosine = st.floats(min_value=-1, max_value=1)
share = st.floats(min_value=0, max_value=1)


def by_key(scored):
    return {s.key: s for s in scored}


def test_a_match_holding_one_word_of_three_keeps_a_ninth_of_its_lexical_score():
    got = by_key(fuse({"a": 7.0, "b": 3.5}, {}, W, coverage={"a": 1 / 3, "b": 1.0}))
    assert got["a"].lexical == pytest.approx(1 / 9)
    assert got["b"].lexical == pytest.approx(0.5)
    assert got["a"].score == pytest.approx(W.lexical / 9)


def test_a_question_in_other_words_finds_its_memory_above_a_one_word_distractor():
    # "which guitar does my sister play": the distractor holds "guitar" only (one word of three, the
    # best bm25 of the query, weakly similar); the memory shares no word but means it.
    ranked = fuse(
        {"shop note": 6.0},
        {"squier": 0.45},
        W,
        similarity={"shop note": 0.25},
        coverage={"shop note": 1 / 3},
    )
    assert [s.key for s in ranked] == ["squier", "shop note"]
    # counting the share plainly (the former formula), the distractor came first
    plain = fuse(
        {"shop note": 6.0},
        {"squier": 0.45},
        W,
        similarity={"shop note": 0.25},
        coverage={"shop note": 1 / 3},
        coverage_exponent=1.0,
    )
    assert [s.key for s in plain] == ["shop note", "squier"]


def test_a_match_holding_every_word_still_outranks_a_merely_similar_one():
    ranked = fuse(
        {"exact": 4.0}, {"similar": 0.6}, W, similarity={"exact": 0.3}, coverage={"exact": 1.0}
    )
    assert [s.key for s in ranked] == ["exact", "similar"]


def test_any_keys_are_fused_and_each_side_is_reported():
    # passages keyed by source and message range, as the semantic side may key them
    ranked = by_key(
        fuse(
            {"s1#0-1": 2.0, "s1#1-2": 1.0},
            {"s1#1-2": 0.5, "s2#0-0": 0.4},
            W,
            coverage={"s1#0-1": 1.0, "s1#1-2": 1.0},
        )
    )
    assert ranked["s1#0-1"].matched_by is MatchedBy.LEXICAL
    assert (ranked["s1#0-1"].lexical, ranked["s1#0-1"].semantic) == (1.0, 0.0)
    assert ranked["s1#1-2"].matched_by is MatchedBy.BOTH
    assert (ranked["s1#1-2"].lexical, ranked["s1#1-2"].semantic) == (0.5, 0.5)
    assert ranked["s2#0-0"].matched_by is MatchedBy.SEMANTIC
    assert (ranked["s2#0-0"].lexical, ranked["s2#0-0"].semantic) == (0.0, 0.4)


def test_a_looked_up_similarity_counts_without_changing_who_matched():
    ranked = by_key(fuse({"a": 1.0}, {}, W, similarity={"a": 0.5}))
    assert ranked["a"].matched_by is MatchedBy.LEXICAL
    assert ranked["a"].semantic == 0.5
    assert ranked["a"].score == pytest.approx(W.lexical + W.semantic * 0.5)


def test_a_given_best_normalizes_and_caps_at_one():
    got = by_key(fuse({"a": 2.0, "b": 8.0}, {}, W, best=4.0))
    assert (got["a"].lexical, got["b"].lexical) == (0.5, 1.0)


def test_equal_scores_are_ordered_by_key():
    ranked = fuse({}, {"b": 0.5, "a": 0.5, "c": 0.5}, W)
    assert [s.key for s in ranked] == ["a", "b", "c"]


def test_coverage_is_the_share_of_query_words_by_stem():
    asked = Query.of("which guitars does my sister play")  # guitar, sister, play
    assert fusion.coverage(asked, "My sister played a yellow guitar") == 1.0
    assert fusion.coverage(asked, "The guitar shop") == pytest.approx(1 / 3)
    assert fusion.coverage(Query.of("the"), "anything") == 0.0


def test_coverage_named_by_entry_is_the_texts_and_a_new_revision_is_worked_out_again():
    asked = Query.of("which guitars does my sister play")
    first = ("src-coverage", 1, "passage 0-1")
    assert fusion.coverage(asked, "My sister played a yellow guitar", first) == 1.0
    # The same name is the same text: what was worked out for it is reused.
    assert fusion.coverage(asked, "My sister played a yellow guitar", first) == 1.0
    # A new revision names another text, worked out from that text.
    later = ("src-coverage", 2, "passage 0-1")
    assert fusion.coverage(asked, "The guitar shop", later) == pytest.approx(1 / 3)


@given(
    st.dictionaries(keys, bm25, max_size=6),
    st.dictionaries(keys, cosine, max_size=6),
    st.dictionaries(keys, share, max_size=6),
)
def test_every_candidate_once_best_first_with_lexical_in_0_1(lexical, semantic, coverage):
    ranked = fuse(lexical, semantic, W, coverage=coverage)
    assert sorted(s.key for s in ranked) == sorted(lexical.keys() | semantic.keys())
    assert all(0.0 <= s.lexical <= 1.0 for s in ranked)
    assert all((s.lexical > 0) <= (s.key in lexical) for s in ranked)
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)
    for s in ranked:
        assert s.score == pytest.approx(W.lexical * s.lexical + W.semantic * s.semantic)


@given(
    st.dictionaries(keys, bm25, min_size=1, max_size=6),
    st.dictionaries(keys, cosine, max_size=6),
    st.dictionaries(keys, share, max_size=6),
    st.data(),
)
def test_more_of_either_side_never_lowers_a_candidate(lexical, semantic, coverage, data):
    key = data.draw(st.sampled_from(sorted(lexical)))
    before = by_key(fuse(lexical, semantic, W, coverage=coverage))[key]
    more_words = {**coverage, key: min(1.0, coverage.get(key, 1.0) + 0.1)}
    closer = {**semantic, key: min(1.0, semantic.get(key, 0.0) + 0.1)}
    assert by_key(fuse(lexical, semantic, W, coverage=more_words))[key].score >= before.score
    assert by_key(fuse(lexical, closer, W, coverage=coverage))[key].score >= before.score


def test_a_passage_named_by_entry_is_rendered_once_whatever_the_query():
    rendered = []

    def text() -> str:
        rendered.append(1)
        return "My sister played a yellow guitar"

    entry = ("tenant", "src-rendered-once", 1, "passage 3-4")
    assert fusion.coverage(Query.of("my sister's guitar"), text, entry) == 1.0
    assert fusion.coverage(Query.of("a yellow guitar"), text, entry) == 1.0
    assert rendered == [1]
