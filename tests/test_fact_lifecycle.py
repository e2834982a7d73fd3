"""Retracting a fact through both services: who may (a user with the review scope, of the
fact's tenant). What the lifecycle and retraction do to the facts is tested on the use cases
(tests/service/test_fact_lifecycle.py)."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import facts_pb2
from tests.fact_time_helpers import fact_of, say, values
from tests.harness import ADMIN_B, KEYS, READER_A, Key, reason
from tests.test_review import AGENT

BEFORE = [("user", "lives in", "Lisbon")]


def retract(client, fact_id, reason_=""):  # type: ignore[no-untyped-def]
    return client.RetractFact(facts_pb2.RetractFactRequest(fact_id=fact_id, reason=reason_))


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
