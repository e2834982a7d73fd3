"""The pure retrieval rules: query words, index entries, MaxScore, prompt rendering,
explanation order."""

from __future__ import annotations

from runtime_svc import assembly
from runtime_svc.assembly import Candidate
from runtime_svc.domain import lexical, text
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.query import Query
from runtime_svc.retrieval import explanation
from runtime_svc.retrieval.explanation import Match


def terms(q):
    return text.query_terms(q)


def test_queries_keep_every_content_word():
    t = terms("What did Caroline say about the adoption agencies?")
    assert [x.word for x in t] == ["caroline", "adoption", "agencies"]


def test_entries_hold_the_same_stems_queries_search_for():
    entry = lexical.analyse("Caroline visited the adoption agencies; agencies were kind.")
    assert set(entry.impacts) == {x.stem for x in terms("caroline visited adoption agencies")}
    assert entry.length == 5
    assert entry.impacts["agenc"] > entry.impacts["adopt"]  # two occurrences weigh more
    assert lexical.analyse("x" * 65 + " kayak").impacts.keys() == {"kayak"}  # no blobs


def test_bounds_certificate_and_reading_depth():
    common = lexical.TermStats("common", 0.2, 1.5, 9000)
    middling = lexical.TermStats("middl", 1.0, 1.5, 800)
    rare = lexical.TermStats("rare", 4.0, 1.5, 20)
    stats = lexical.by_upper_bound([rare, common, middling])
    assert [t.stem for t in stats] == ["common", "middl", "rare"]
    reads = {
        "rare": lexical.ListRead(256, True, 0.0),
        "middl": lexical.ListRead(256, False, 0.5),
        "common": lexical.ListRead(256, False, 1.0),
    }
    # an unreached memory holds no "rare" and at most impact 0.5 / 1.0 of the others
    assert lexical.unreached_bound(stats, reads) == 1.0 * 0.5 + 0.2 * 1.0
    assert lexical.certify(stats, reads, 0.71, 0.6).exact
    assert not lexical.certify(stats, reads, 0.7, None).exact  # a tie could rank first
    # below the floor (the k-th best lower bound), a memory not scored could be better
    cert = lexical.certify(stats, reads, 0.9, 1.2)
    assert not cert.exact and cert.bound == 1.2
    # the rare word is read first, to its end at once; then the word whose contribution
    # weighs most per posting read ("middl": 0.5 over 800 postings > "common": 0.2 over 1024)
    assert lexical.next_read(stats, {}, first=256, growth=4, budget=20_000) == ("rare", 256)
    assert lexical.next_read(stats, reads, first=256, growth=4, budget=20_000) == (
        "middl",
        1024,
    )
    assert lexical.next_read(stats, reads, first=256, growth=4, budget=512) == ("middl", 512)
    at_budget = {k: lexical.ListRead(512, r.exhausted, r.last_impact) for k, r in reads.items()}
    assert lexical.next_read(stats, at_budget, first=256, growth=4, budget=512) is None
    everything = {t.stem: lexical.ListRead(9000, True, 0.0) for t in stats}
    assert lexical.certify(stats, everything, None, None).exact  # every memory was scored
    assert not lexical.certify(stats, everything, None, 2.0).exact


def test_prompt_never_cuts_a_memory_and_respects_the_budget():
    cands = [Candidate("s1", 1, "word " * 50), Candidate("s2", 1, "short memory")]
    block = assembly.assemble(cands, Query.of("word"), 40, text.count_tokens)
    assert [c.source_id for c in block.cited] == ["s2"]
    assert block.tokens <= 40 and text.count_tokens(block.context) == block.tokens


def test_explanation_orders_selected_then_below_limit_then_filtered():
    ms = [
        Match("b", 1, "active", State.ELIGIBLE, 2.0),
        Match("a", 1, "active", State.ELIGIBLE, 2.0),
        Match("c", 3, "cold", State.COLD, 9.0),
        Match("d", 1, "active", State.ELIGIBLE, 1.0),
    ]
    entries = explanation.explain(ms, 2, thread_disabled=False)
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
    s = explanation.snippet(body, Query.of("guitar"))
    assert "guitars" in s and s.startswith("…") and s.endswith("…")
