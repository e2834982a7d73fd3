"""Sources, classification and retrieval through both services."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import retrieval_pb2, sources_pb2
from tests.harness import ADMIN_A, ADMIN_B, READER_A, metadata_of, reason
from tests.memory_helpers import (
    ACTIVE,
    COLD,
    assemble,
    classify,
    explain,
    get_source,
    insert,
    list_sources,
    search,
    search_ids,
)
from tests.test_thread_mode import DISABLED, read, set_mode


@pytest.fixture
def two(stack):
    """Two matching sources, one of them cold, each with a unique marker word."""
    client = stack.client()
    active = insert(client, "The user plays a yellow guitar on weekends zqxmarkeractive")
    cold = insert(client, "The user sold an old guitar last spring zqxmarkercold")
    made_cold = classify(client, cold.source_id, 1, COLD)
    assert made_cold.revision == 2 and made_cold.previous_classification == ACTIVE
    return client, active, cold


def test_seed_1_cold_source_stays_stored_but_is_never_retrieved(two):
    client, active, cold = two
    listed = {s.source_id: s for s in list_sources(client).sources}
    assert set(listed) == {active.source_id, cold.source_id}
    assert listed[cold.source_id].classification == COLD
    assert listed[cold.source_id].effective_retrieval_state == (
        sources_pb2.EFFECTIVE_RETRIEVAL_STATE_COLD
    )
    stored = get_source(client, cold.source_id, include_content=True)
    assert stored.content == "The user sold an old guitar last spring zqxmarkercold"
    assert stored.classification == COLD and stored.revision == 2

    assert search_ids(client, "guitar") == [active.source_id]
    prompt = assemble(client, "Which guitar does the user have?")
    assert [c.source_id for c in prompt.citations] == [active.source_id]
    assert "zqxmarkeractive" in prompt.context and "zqxmarkercold" not in prompt.context
    assert prompt.prompt_record_id and 0 < prompt.tokens_used <= 500


def test_prompt_record_cites_only_what_was_injected(stack, two):
    client, active, _ = two
    prompt = assemble(client, "guitar")
    rows = stack.sql(
        "SELECT source_id, source_revision FROM derived_provenance WHERE derived_id = :d",
        d=prompt.prompt_record_id,
    )
    assert rows == [(active.source_id, 1)]


def test_seed_2_explanation_reports_the_cold_source_without_text(two):
    client, active, cold = two
    result = explain(client, "guitar")
    entries = {e.source_id: e for e in result.entries}
    assert entries[active.source_id].included and (
        entries[active.source_id].reason == retrieval_pb2.REASON_SELECTED
    )
    assert entries[active.source_id].rank == 1 and entries[active.source_id].score > 0
    c = entries[cold.source_id]
    assert (c.included, c.revision, c.classification, c.reason) == (
        False,
        2,
        COLD,
        retrieval_pb2.REASON_COLD,
    )
    assert result.total_matches == 2 and not result.truncated
    for message in (result, list_sources(client)):
        raw = message.SerializeToString()
        for word in (b"zqxmarkeractive", b"zqxmarkercold", b"guitar", b"yellow"):
            assert word not in raw


def test_seed_3_stale_revision_changes_nothing_and_compensation_restores(two):
    client, active, cold = two
    before_search = search(client, "guitar").SerializeToString()
    before_explain = explain(client, "guitar").SerializeToString()
    with pytest.raises(grpc.RpcError) as e:
        classify(client, cold.source_id, 1, ACTIVE)  # stale: it is at revision 2
    assert reason(e.value) == "REVISION_MISMATCH"
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert search(client, "guitar").SerializeToString() == before_search
    assert explain(client, "guitar").SerializeToString() == before_explain

    # both active, then the compensating change: cold again restores the exact result
    classify(client, cold.source_id, 2, ACTIVE)
    assert set(search_ids(client, "guitar")) == {active.source_id, cold.source_id}
    classify(client, cold.source_id, 3, COLD)
    assert search(client, "guitar").SerializeToString() == before_search
    after = explain(client, "guitar")
    expected = retrieval_pb2.ExplainRetrievalResponse.FromString(before_explain)
    for entry in expected.entries:
        if entry.source_id == cold.source_id:
            entry.revision = 4  # revisions aside, identical
    assert after == expected


def test_seed_6_unrelated_state_is_untouched(stack, two):
    client, active, cold = two
    other = insert(client, "The user drinks green tea every morning")
    spare = insert(client, "The user keeps a spare bicycle")
    tea_before = search(client, "green tea").SerializeToString()
    set_mode(client, DISABLED, 0, thread_id="t9")
    # thread mode changes no source's classification or state
    assert {
        (s.source_id, s.classification, s.effective_retrieval_state)
        for s in list_sources(client).sources
    } == {
        (active.source_id, ACTIVE, sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE),
        (cold.source_id, COLD, sources_pb2.EFFECTIVE_RETRIEVAL_STATE_COLD),
        (other.source_id, ACTIVE, sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE),
        (spare.source_id, ACTIVE, sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE),
    }
    # classification changes no thread's mode, nor unrelated sources' results
    classify(client, spare.source_id, 1, COLD)
    classify(client, spare.source_id, 2, ACTIVE)
    assert read(client, "t9").mode == DISABLED and read(client, "t9").revision == 1
    assert read(client, "t1").revision == 0
    assert search(client, "green tea").SerializeToString() == tea_before
    assert search_ids(client, "guitar") == [active.source_id]


def test_filtering_happens_before_top_k(stack):
    client = stack.client()
    cold_ids = []
    for i in range(50):  # cold ones match better (the word three times)
        s = insert(client, f"harbor harbor harbor note {i}")
        classify(client, s.source_id, 1, COLD)
        cold_ids.append(s.source_id)
    active_ids = {insert(client, f"harbor visit {i}").source_id for i in range(5)}
    assert set(search_ids(client, "harbor", limit=5)) == active_ids
    entries = explain(client, "harbor", limit=5).entries
    assert [e.source_id for e in entries if e.included] == search_ids(client, "harbor", limit=5)
    assert sum(e.reason == retrieval_pb2.REASON_COLD for e in entries) == 50


def test_ranking_is_deterministic_with_ties_broken_by_source_id(stack):
    client = stack.client()
    ids = sorted(insert(client, "identical lighthouse sentence").source_id for _ in range(4))
    assert search_ids(client, "lighthouse") == ids
    first = explain(client, "lighthouse", limit=2)
    assert [e.reason for e in first.entries] == [retrieval_pb2.REASON_SELECTED] * 2 + [
        retrieval_pb2.REASON_BELOW_LIMIT
    ] * 2
    assert [e.rank for e in first.entries] == [1, 2, 3, 4]
    assert explain(client, "lighthouse", limit=2) == first


def test_natural_language_questions_find_stemmed_words(stack):
    client = stack.client()
    guitar = insert(client, "I've been playing guitars since 2010, mostly blues.").source_id
    insert(client, "The weather was nice.")
    assert search_ids(client, "What guitar does the user play?") == [guitar]
    assert search_ids(client, "PLAYED... guitar!!") == [guitar]
    assert search(client, "what is it?").hits == []  # nothing but stop words


def test_disabled_thread_gets_no_memory_and_cannot_insert(stack):
    client = stack.client()
    s = insert(client, "The user likes sailing")
    set_mode(client, DISABLED, 0, thread_id="quiet")
    with pytest.raises(grpc.RpcError) as e:
        insert(client, "A new memory from a quiet thread", thread_id="quiet")
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(e.value) == "THREAD_MEMORY_DISABLED"
    prompt = assemble(client, "sailing", thread_id="quiet")
    assert prompt.context == "" and list(prompt.citations) == [] and not prompt.prompt_record_id
    assert search_ids(client, "sailing", thread_id="quiet") == []
    entry = explain(client, "sailing", thread_id="quiet").entries[0]
    assert (entry.source_id, entry.included, entry.reason) == (
        s.source_id,
        False,
        retrieval_pb2.REASON_THREAD_MEMORY_DISABLED,
    )
    assert assemble(client, "sailing", thread_id="loud").citations[0].source_id == s.source_id
    assert len(list_sources(client).sources) == 1


def test_request_id_deduplicates_inserts(stack):
    client = stack.client()
    first = insert(client, "The user is allergic to peanuts", request_id="import-1")
    again = insert(client, "The user is allergic to peanuts", request_id="import-1")
    assert (again.source_id, again.revision, again.deduplicated) == (first.source_id, 1, True)
    assert again.receipt == first.receipt
    assert len(list_sources(client).sources) == 1
    with pytest.raises(grpc.RpcError) as e:
        insert(client, "Something else entirely", request_id="import-1")
    assert reason(e.value) == "INVALID_FIELD"
    assert "Something" not in e.value.details()
    # it names the source the first request made (an import finds its copy by it)
    assert metadata_of(e.value) == {"source_id": first.source_id}


def test_validate_only_stores_nothing(stack):
    client = stack.client()
    r = client.InsertMemory(sources_pb2.InsertMemoryRequest(content="x y z", validate_only=True))
    assert r.status == sources_pb2.STATUS_ACTIVE and not r.source_id and not r.HasField("receipt")
    assert list_sources(client).sources == []


def test_conversations_are_stored_and_searchable(stack):
    client = stack.client()
    r = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            messages=[
                sources_pb2.Message(role="user", content="Remember that my cat is called Miso"),
                sources_pb2.Message(role="assistant", content="Noted."),
            ]
        )
    )
    got = get_source(client, r.source_id, include_content=True)
    assert got.source_kind == sources_pb2.SOURCE_KIND_CONVERSATION
    assert [(m.role, m.content) for m in got.messages] == [
        ("user", "Remember that my cat is called Miso"),
        ("assistant", "Noted."),
    ]
    assert search_ids(client, "cat's name") == [r.source_id]


def test_content_needs_the_content_scope(stack):
    client = stack.client()
    s = insert(client, "secret recipe with cardamom")
    reader = stack.client(READER_A)
    meta = get_source(reader, s.source_id)
    assert meta.content == "" and meta.content_sha256
    with pytest.raises(grpc.RpcError) as e:
        get_source(reader, s.source_id, include_content=True)
    assert (
        e.value.code() == grpc.StatusCode.PERMISSION_DENIED and reason(e.value) == "MISSING_SCOPE"
    )
    with pytest.raises(grpc.RpcError) as e:
        insert(reader, "readers cannot write")
    assert reason(e.value) == "MISSING_SCOPE"


def test_another_tenants_source_is_indistinguishable_from_a_missing_one(stack):
    a, b = stack.client(ADMIN_A), stack.client(ADMIN_B)
    s = insert(a, "tenant A's memory about kayaks")
    errors = []
    for source_id in (s.source_id, "src_000000000000000000000000"):
        with pytest.raises(grpc.RpcError) as e:
            get_source(b, source_id)
        errors.append(e.value)
        with pytest.raises(grpc.RpcError) as e2:
            classify(b, source_id, 1, COLD)
        assert e2.value.code() == grpc.StatusCode.NOT_FOUND
    assert all(err.code() == grpc.StatusCode.NOT_FOUND for err in errors)
    assert errors[0].details() == errors[1].details()
    assert (
        dict(errors[0].trailing_metadata())["grpc-status-details-bin"]
        == dict(errors[1].trailing_metadata())["grpc-status-details-bin"]
    )
    assert search_ids(b, "kayaks") == [] and explain(b, "kayaks").entries == []
    assert search_ids(a, "kayaks") == [s.source_id]


BAD = [
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="", limit=5)),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="   ", limit=5)),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="x", limit=0)),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="x", limit=101)),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="x" * 2001, limit=5)),
    ("AssemblePrompt", retrieval_pb2.AssemblePromptRequest(query="x", token_budget=-1)),
    ("AssemblePrompt", retrieval_pb2.AssemblePromptRequest(query="x", token_budget=0)),
    ("ExplainRetrieval", retrieval_pb2.ExplainRetrievalRequest(query="x", limit=0)),
    (
        "SetSourceClassification",
        sources_pb2.SetSourceClassificationRequest(
            source_id="src_x", expected_revision=1, classification=7
        ),
    ),
    (
        "SetSourceClassification",
        sources_pb2.SetSourceClassificationRequest(
            source_id="src_x", expected_revision=-1, classification=COLD
        ),
    ),
    ("InsertMemory", sources_pb2.InsertMemoryRequest()),
    (
        "InsertMemory",
        sources_pb2.InsertMemoryRequest(
            content="a", messages=[sources_pb2.Message(role="user", content="b")]
        ),
    ),
    (
        "InsertMemory",
        sources_pb2.InsertMemoryRequest(messages=[sources_pb2.Message(role="wizard", content="b")]),
    ),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="x" * 1_000_001)),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="a", source_kind=3)),
    (
        "ListSources",
        sources_pb2.ListSourcesRequest(filter=sources_pb2.SourceFilter(classification=9)),
    ),
    ("GetSource", sources_pb2.GetSourceRequest(source_id="")),
]


@pytest.mark.parametrize(
    ("method", "request_message"), BAD, ids=[f"{m}-{i}" for i, (m, _) in enumerate(BAD)]
)
def test_bad_input_is_invalid_argument_and_changes_nothing(stack, method, request_message):
    client = stack.client()
    s = insert(client, "a kept memory about lanterns")
    with pytest.raises(grpc.RpcError) as e:
        getattr(client, method)(request_message)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
    assert reason(e.value) == "INVALID_FIELD"
    sources = list_sources(client).sources
    assert [(x.source_id, x.revision) for x in sources] == [(s.source_id, 1)]


def test_page_tokens_are_bound_to_query_and_tenant(stack):
    a, b = stack.client(ADMIN_A), stack.client(ADMIN_B)
    ids = [insert(a, f"memory number {i}").source_id for i in range(5)]
    seen, token = [], ""
    while True:
        page = list_sources(a, page_size=2, page_token=token)
        seen += [s.source_id for s in page.sources]
        token = page.next_page_token
        if not token:
            break
    assert seen == ids[::-1]  # newest first
    token = list_sources(a, page_size=2).next_page_token
    for client, filters in ((a, {"classification": COLD}), (b, {})):
        with pytest.raises(grpc.RpcError) as e:
            list_sources(client, page_size=2, page_token=token, **filters)
        assert reason(e.value) == "INVALID_PAGE_TOKEN"


def test_list_filters(stack):
    client = stack.client()
    hot = insert(client, "hot one", thread_id="th").source_id
    cold = insert(client, "cold one").source_id
    classify(client, cold, 1, COLD)

    def ids(**f):
        return [s.source_id for s in list_sources(client, **f).sources]

    assert ids(classification=COLD) == [cold]
    assert ids(effective_state=sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE) == [hot]
    assert ids(thread_id="th") == [hot]
    assert ids(status=sources_pb2.STATUS_PENDING_REVIEW) == []
    assert sorted(ids(source_kind=sources_pb2.SOURCE_KIND_MEMORY)) == sorted([hot, cold])


def test_token_budget_is_respected(stack):
    client = stack.client()
    for i in range(20):
        insert(client, f"the user visited museum number {i} in the old town with friends")
    big = assemble(client, "museum", token_budget=10_000)
    small = assemble(client, "museum", token_budget=60)
    assert len(big.citations) == 20
    assert 0 < len(small.citations) < 20 and small.tokens_used <= 60
    assert assemble(client, "museum", token_budget=5).context == ""


def test_mutations_emit_events_and_receipts(stack):
    from agentmem.v1 import events_pb2

    client = stack.client()
    s = insert(client, "an event-worthy memory")
    classify(client, s.source_id, 1, COLD)
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0))
    got = []
    for item in stream:
        got.append(item.event)
        if len(got) == 2:
            break
    stream.cancel()
    assert got[0].memory_inserted.source_id == s.source_id
    assert got[0].memory_inserted.status == sources_pb2.STATUS_ACTIVE
    u = got[1].source_classification_updated
    assert (u.source_id, u.previous_classification, u.classification, u.revision) == (
        s.source_id,
        ACTIVE,
        COLD,
        2,
    )
    raw = b"".join(e.SerializeToString() for e in got)
    assert b"event-worthy" not in raw


def test_searches_alone_and_beside_other_calls_answer_alike(stack):
    """A search that is the only call in flight runs on the runtime's event loop thread,
    one beside other calls on its pool: both give the same hits, and calls in flight at
    once (searches, inserts, a cold classification) all complete."""
    from concurrent.futures import ThreadPoolExecutor

    client = stack.client()
    ids = [insert(client, f"lighthouse keeper log {i} zqxbeside").source_id for i in range(12)]
    classify(client, ids[0], 1, COLD)
    alone = search_ids(client, "lighthouse keeper", limit=20)
    assert set(alone) == set(ids[1:])

    def work(i: int) -> list[str]:
        if i % 3 == 0:
            insert(client, f"harbour note {i}")
            return alone
        return search_ids(client, "lighthouse keeper", limit=20)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(48)))
    assert all(r == alone for r in results)
