"""The lifecycle decides what is current: cold, revoked, erased, pending or retracted
statements leave their attribute's chain and the one before is current again; the chain's
links are derived records, found by source, purged and read back."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import audit_pb2, events_pb2, facts_pb2, foreign_pb2, review_pb2
from tests.fact_time_helpers import fact_of, history, say, search, values
from tests.harness import ADMIN_A, ADMIN_B, KEYS, READER_A, Key, reason
from tests.memory_helpers import ACTIVE, COLD, classify, get_source, search_ids
from tests.test_review import AGENT

LIVES = ("user", "lives in")
WHERE = [("user", "lives in", "Berlin")]
BEFORE = [("user", "lives in", "Lisbon")]


def readback(client, source_id):  # type: ignore[no-untyped-def]
    return client.ReadbackSource(foreign_pb2.ReadbackSourceRequest(source_id=source_id))


def supersessions(client, source_id):  # type: ignore[no-untyped-def]
    return [d for d in readback(client, source_id).derivatives if d.kind == "supersession"]


def retract(client, fact_id, reason_=""):  # type: ignore[no-untyped-def]
    return client.RetractFact(facts_pb2.RetractFactRequest(fact_id=fact_id, reason=reason_))


def test_cold_and_active_flip_the_current_value(stack):
    client = stack.client()
    say(client, "I live in Lisbon", 0)
    berlin = say(client, "I live in Berlin", 10)
    classify(client, berlin.source_id, 1, COLD)
    assert values(client) == BEFORE
    assert history(client, *LIVES) == [("Lisbon", 0, None)]
    classify(client, berlin.source_id, 2, ACTIVE)
    assert values(client) == WHERE
    assert history(client, *LIVES) == [("Lisbon", 0, 10), ("Berlin", 10, None)]


@pytest.mark.parametrize("end", ["revoke", "erase"])
def test_revoking_or_erasing_the_newest_statement_reexposes_the_one_before(stack, end):
    client = stack.client()
    lisbon = say(client, "I live in Lisbon", 0)
    berlin = say(client, "I live in Berlin", 10)
    link = f"{fact_of(client, 'Lisbon').fact_id}>{fact_of(client, 'Berlin').fact_id}"
    for s in (lisbon, berlin):  # the link is found by either source
        found = supersessions(client, s.source_id)
        assert [(d.derivative_id, d.state, d.eligible) for d in found] == [(link, "stored", True)]
    if end == "revoke":
        client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=berlin.source_id))
    else:
        client.EraseSource(
            foreign_pb2.EraseSourceRequest(source_id=berlin.source_id, expected_revision=1)
        )
    assert values(client) == BEFORE
    assert history(client, *LIVES) == [("Lisbon", 0, None)]
    r = readback(client, berlin.source_id)
    assert r.clean, [(d.kind, d.state) for d in r.derivatives]
    assert [d.state for d in supersessions(client, berlin.source_id)] == ["purged"]
    assert [d.state for d in supersessions(client, lisbon.source_id)] == ["purged"]
    assert stack.sql("SELECT count(*) FROM facts WHERE superseded_by_source != ''") == [(0,)]


def test_a_pending_statement_changes_nothing_until_approved(make_stack):
    stack = make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT)],
    )
    agent, user = stack.client(AGENT), stack.client(ADMIN_A)
    say(user, "I live in Lisbon", 0, save_intent="explicit_user_request")
    pending = say(agent, "I live in Berlin", 10)
    assert values(user) == BEFORE
    user.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=pending.source_id, expected_revision=1, decision=review_pb2.DECISION_APPROVE
        )
    )
    assert values(user) == WHERE
    assert history(user, *LIVES) == [("Lisbon", 0, 10), ("Berlin", 10, None)]


def test_retracting_a_fact_restores_the_value_before_and_keeps_the_memory(stack):
    client = stack.client()
    say(client, "I live in Lisbon", 0)
    berlin = say(client, "I live in Berlin", 10)
    wrong = fact_of(client, "Berlin")
    done = retract(client, wrong.fact_id, "I never lived in Berlin")
    assert done.fact_id == wrong.fact_id
    assert (done.receipt.action, done.receipt.target_kind, done.receipt.target_id) == (
        "fact.retract",
        "fact",
        wrong.fact_id,
    )
    # Gone from every read of facts; the value before is current again.
    assert values(client) == BEFORE
    assert history(client, *LIVES) == [("Lisbon", 0, None)]
    everything = search(client, history=True, status=facts_pb2.FACT_STATUS_ALL)
    assert wrong.fact_id not in {f.fact_id for f in everything}
    assert [e.value for e in client.GetProfile(facts_pb2.GetProfileRequest()).entries] == ["Lisbon"]
    answer = client.Ask(facts_pb2.AskRequest(question="where do I live", token_budget=100))
    assert "Berlin" not in answer.answer and wrong.fact_id not in [
        p.fact_id for p in answer.provenance
    ]
    # The memory itself stays, unchanged.
    source = get_source(client, berlin.source_id)
    assert (source.revision, source.effective_retrieval_state) == (1, 1)
    assert search_ids(client, "Berlin") == [berlin.source_id]
    # Announced, with ids only (the reason is not kept).
    stream = client.WatchEvents(
        events_pb2.WatchEventsRequest(kinds=[events_pb2.EVENT_KIND_FACT_RETRACTED])
    )
    event = next(iter(stream)).event
    stream.cancel()
    assert (event.fact_retracted.fact_id, event.fact_retracted.source_id) == (
        wrong.fact_id,
        berlin.source_id,
    )
    trail = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(target_id=wrong.fact_id))
    assert [r.action for r in trail.receipts] == ["fact.retract"]
    assert stack.sql("SELECT count(*) FROM events WHERE payload LIKE '%never lived%'") == [(0,)]
    # Once only.
    with pytest.raises(grpc.RpcError) as e:
        retract(client, wrong.fact_id)
    assert reason(e.value) == "FACT_RETRACTED"


SERVICE = Key("tok-service-a", "svc", "tenant-a", ("memory.read", "memory.review"), "service")


def test_retracting_needs_a_user_with_the_review_scope(make_stack):
    stack = make_stack(auth__api_keys=[k.config() for k in (*KEYS, AGENT, SERVICE)])
    owner = stack.client()
    say(owner, "I live in Lisbon", 0)
    fact_id = fact_of(owner, "Lisbon").fact_id
    cases = [
        (stack.client(READER_A), "MISSING_SCOPE"),
        (stack.client(AGENT), "USER_PRINCIPAL_REQUIRED"),
        (stack.client(SERVICE), "USER_PRINCIPAL_REQUIRED"),
        (stack.client(ADMIN_B), "NOT_FOUND"),  # another tenant's fact
    ]
    for client, expected in cases:
        with pytest.raises(grpc.RpcError) as e:
            retract(client, fact_id)
        assert reason(e.value) == expected
    with pytest.raises(grpc.RpcError) as e:
        retract(owner, "fact_nosuch")
    assert reason(e.value) == "NOT_FOUND"
    with pytest.raises(grpc.RpcError) as e:
        retract(owner, fact_id, "x" * 201)
    assert reason(e.value) == "INVALID_FIELD"
    assert values(owner) == BEFORE  # nothing changed
    assert stack.sql("SELECT count(*) FROM facts WHERE retracted_at_us != 0") == [(0,)]


def test_retracting_the_older_value_leaves_the_current_one(stack):
    client = stack.client()
    say(client, "I live in Lisbon", 0)
    say(client, "I live in Berlin", 10)
    retract(client, fact_of(client, "Lisbon").fact_id)
    assert values(client) == WHERE
    assert history(client, *LIVES) == [("Berlin", 10, None)]
