"""Insert policy: permissive, require_save_intent, review_pending, as the runtime enforces
them; a refused insert stores nothing, a validate_only one reports without storing."""

from __future__ import annotations

import pytest

from agentmem.contract.errors import AgentmemError
from runtime_svc.domain.sources import SaveIntent, Status
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage.source_pages import SourceFilter
from tests.service.wiring import caller, reason

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
PLANTED_KEY = "sk-live-PLANTEDKEY1234567890"
A = caller()


def insert(cases, content, intent="", **fields):
    return cases.inserts.insert(
        A, InsertCommand(content=content, intent=SaveIntent(intent, **fields))
    )


def search_ids(cases, query):
    return [f.source_id for f in cases.retrieval.search(A, query, "", 10)]


def listed(cases, status=""):
    return cases.reads.list_sources(A, SourceFilter(status=status), 100, "")[0]


def test_permissive_accepts_inserts_without_a_marker(service):
    r = insert(service, SQUIER)
    assert r.status == Status.ACTIVE
    assert search_ids(service, "Squier") == [r.source_id]


@pytest.mark.parametrize("intent", ["explicit_user_request", "user_confirmed", "client_auto_save"])
def test_require_save_intent_accepts_each_marker(make_service, intent):
    cases = make_service(memory__insert_policy="require_save_intent").cases
    r = insert(cases, SQUIER, intent, source="opencode")
    assert r.status == Status.ACTIVE


def test_require_save_intent_refuses_without_a_valid_marker_and_stores_nothing(make_service):
    cases = make_service(memory__insert_policy="require_save_intent").cases
    for intent, expected in (
        ("", "SAVE_INTENT_REQUIRED"),
        ("because_i_felt_like_it", "SAVE_INTENT_INVALID"),
    ):
        with pytest.raises(AgentmemError) as e:
            insert(cases, f"{SQUIER} {PLANTED_KEY}", intent)
        assert reason(e.value) == expected
        raw = f"{e.value} {e.value.message} {e.value.metadata} {e.value.violations}"
        for secret in ("Squier", "pickguard", PLANTED_KEY):
            assert secret not in raw
    assert listed(cases) == []
    assert search_ids(cases, "Squier") == []


def test_validate_only_reports_the_policy_without_storing(make_service):
    cases = make_service(memory__insert_policy="require_save_intent").cases
    with pytest.raises(AgentmemError) as e:
        cases.inserts.insert(A, InsertCommand(content=SQUIER, validate_only=True))
    assert reason(e.value) == "SAVE_INTENT_REQUIRED"
    ok = cases.inserts.insert(
        A,
        InsertCommand(content=SQUIER, validate_only=True, intent=SaveIntent("user_confirmed")),
    )
    assert ok.status == Status.ACTIVE and not ok.source_id and ok.receipt is None
    assert listed(cases) == []


def test_review_pending_stores_but_never_retrieves(make_service):
    cases = make_service(memory__insert_policy="review_pending").cases
    pending = insert(cases, SQUIER)
    marked = insert(cases, "I play bass on Sundays", "explicit_user_request")
    assert pending.status == Status.PENDING_REVIEW
    assert marked.status == Status.ACTIVE
    assert search_ids(cases, "Squier") == []
    assert search_ids(cases, "bass") == [marked.source_id]
    assert [s.source_id for s in listed(cases)] == [marked.source_id]
    held = listed(cases, status=Status.PENDING_REVIEW.value)
    assert [(s.source_id, s.state) for s in held] == [(pending.source_id, "pending_review")]


def test_save_intent_companions_are_length_limited(service):
    with pytest.raises(AgentmemError) as e:
        insert(service, "x y", "user_confirmed", evidence="e" * 201)
    assert reason(e.value) == "INVALID_FIELD"
