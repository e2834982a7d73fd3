"""The pure retrieval rules: term selection, scoping, prompt rendering, explanation order."""

from __future__ import annotations

from runtime_svc.domain import retrieval, text
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.retrieval import Candidate, Match


def terms(q):
    return text.query_terms(q)


def test_small_tenants_search_every_content_word():
    t = terms("What did Caroline say about the adoption agencies?")
    assert [x.word for x in t] == ["caroline", "adoption", "agencies"]
    p = retrieval.plan(t, {}, tenant_docs=500, index_docs=1_000_000, posting_budget=20_000)
    assert p.terms == t and p.scoped


def test_large_tenants_keep_the_rarest_terms_within_the_budget():
    t = terms("common rare middling")
    df = {"common": 600_000, "rare": 2_000, "middl": 15_000}
    p = retrieval.plan(t, df, tenant_docs=1_000_000, index_docs=1_000_000, posting_budget=20_000)
    assert [x.word for x in p.terms] == ["rare", "middling"] and not p.scoped
    # the rarest term is kept even when it alone is over the budget
    only = retrieval.select_terms(
        t,
        {"common": 9e5, "rare": 5e5, "middl": 7e5},
        tenant_docs=10**6,
        index_docs=10**6,
        posting_budget=1000,
    )
    assert [x.word for x in only] == ["rare"]


def test_estimates_use_the_tenants_share_of_the_index():
    t = terms("common rare")
    df = {"common": 600_000, "rare": 50_000}
    kept = retrieval.select_terms(
        t, df, tenant_docs=100_000, index_docs=1_000_000, posting_budget=70_000
    )
    assert [x.word for x in kept] == ["rare", "common"]  # 5k + 60k estimated postings


def test_prompt_never_cuts_a_memory_and_respects_the_budget():
    cands = [Candidate("s1", 1, "word " * 50), Candidate("s2", 1, "short memory")]
    block = retrieval.render_prompt(cands, token_budget=40)
    assert [c.source_id for c in block.cited] == ["s2"]
    assert block.tokens <= 40 and text.count_tokens(block.context) == block.tokens


def test_explanation_orders_selected_then_below_limit_then_filtered():
    ms = [
        Match("b", 1, "active", State.ELIGIBLE, 2.0),
        Match("a", 1, "active", State.ELIGIBLE, 2.0),
        Match("c", 3, "cold", State.COLD, 9.0),
        Match("d", 1, "active", State.ELIGIBLE, 1.0),
    ]
    entries = retrieval.explain(ms, 2, thread_disabled=False)
    assert [(e.source_id, e.reason, e.rank) for e in entries] == [
        ("a", "selected", 1),
        ("b", "selected", 2),
        ("d", "below_limit", 3),
        ("c", "cold", 0),
    ]


def test_snippet_centres_on_a_matching_word():
    body = (
        " ".join(f"w{i}" for i in range(100)) + " guitars " + " ".join(f"v{i}" for i in range(50))
    )
    s = retrieval.snippet(body, terms("guitar"))
    assert "guitars" in s and s.startswith("…") and s.endswith("…")
