"""Insert policy on the wire: a refusal's status, details and metadata never echo the payload
or the credential. The policy's rules are tested on the use case
(tests/service/test_insert_policy.py)."""

from __future__ import annotations

import grpc
import pytest

from tests.harness import ADMIN_A, reason
from tests.memory_helpers import insert, list_sources, search_ids

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
PLANTED_KEY = "sk-live-PLANTEDKEY1234567890"


def test_require_save_intent_refuses_the_opencode_case_and_stores_nothing(make_stack):
    stack = make_stack(memory__insert_policy="require_save_intent")
    client = stack.client()
    for metadata, expected in (
        ({}, "SAVE_INTENT_REQUIRED"),
        ({"save_intent": "because_i_felt_like_it"}, "SAVE_INTENT_INVALID"),
    ):
        with pytest.raises(grpc.RpcError) as e:
            insert(client, f"{SQUIER} {PLANTED_KEY}", **metadata)
        err = e.value
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(err) == expected
        raw = err.details() + str(dict(err.trailing_metadata()))
        for secret in ("Squier", "pickguard", PLANTED_KEY, ADMIN_A.token):
            assert secret not in raw
    assert list_sources(client).sources == []
    assert search_ids(client, "Squier") == []
