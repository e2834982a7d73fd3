"""Trusted save intents: a claim the credential is not trusted for is held for a user's review
under every insert policy; a trusted claim behaves as before."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    events_pb2,
    review_pb2,
    sources_pb2,
)
from agentmem_kernel import config
from tests.harness import ADMIN_A, KEYS, Key, reason
from tests.memory_helpers import get_source, insert, search_ids
from tests.test_oidc import AUDIENCE, ISSUER, idp, token  # noqa: F401 (idp: a fixture)

POLICIES = ("permissive", "require_save_intent", "review_pending")
USER_CLAIMS = ("explicit_user_request", "user_confirmed")
SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
PENDING, ACTIVE = sources_pb2.STATUS_PENDING_REVIEW, sources_pb2.STATUS_ACTIVE
AGENT = Key(
    "tok-trust-agent",
    "opencode-agent",
    "tenant-a",
    ("memory.read", "memory.write", "memory.review", "memory.content.read"),
    kind="agent",
)
USER = Key(
    "tok-trust-user",
    "ann",
    "tenant-a",
    ("memory.read", "memory.write", "memory.review", "memory.content.read"),
)


def agent_config(*trusted: str) -> dict:
    return {**AGENT.config(), "trusted_save_intents": list(trusted)}


@pytest.fixture
def trust_stack(make_stack):
    """A stack whose agent key is trusted for client_auto_save only; policy per test."""

    def make(policy: str = "permissive", **overrides):
        return make_stack(
            memory__insert_policy=policy,
            auth__api_keys=[
                *(k.config() for k in KEYS),
                agent_config("client_auto_save"),
                USER.config(),
            ],
            **overrides,
        )

    return make


def receipts_of(client, source_id):
    return list(
        client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(target_id=source_id)).receipts
    )


def pending_ids(client):
    listed = client.ListMemories(
        review_pb2.ListMemoriesRequest(status_filter=review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW)
    )
    return [
        (m.source_id, m.inserted_by, m.save_intent, m.save_intent_held) for m in listed.memories
    ]


def review(client, source_id, expected, decision):
    return client.ReviewMemory(
        review_pb2.ReviewMemoryRequest(
            source_id=source_id, expected_revision=expected, decision=decision
        )
    )


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("claim", USER_CLAIMS)
def test_an_agent_claim_it_is_not_trusted_for_is_held_under_every_policy(
    trust_stack, policy, claim
):
    stack = trust_stack(policy)
    agent, user = stack.client(AGENT), stack.client(USER)
    held = insert(agent, SQUIER, save_intent=claim, save_intent_source="opencode")
    assert held.status == PENDING
    assert held.save_intent_held is True
    assert claim in held.save_intent_held_reason
    assert "Squier" not in held.save_intent_held_reason
    # nothing unconfirmed is retrievable, and nothing the user wanted is lost
    assert search_ids(user, "Squier") == []
    assert pending_ids(user) == [(held.source_id, "opencode-agent", claim, True)]
    assert get_source(user, held.source_id).save_intent_held is True
    # the receipt records the claimed intent and that it was held
    (receipt,) = receipts_of(stack.client(ADMIN_A), held.source_id)
    assert (receipt.action, receipt.principal_id) == ("memory.insert", "opencode-agent")
    assert (receipt.save_intent, receipt.save_intent_held) == (claim, True)
    assert held.receipt == receipt
    # the event is the one of any pending insert
    stream = user.WatchEvents(
        events_pb2.WatchEventsRequest(kinds=[events_pb2.EVENT_KIND_MEMORY_INSERTED])
    )
    event = next(iter(stream)).event
    stream.cancel()
    assert (event.memory_inserted.source_id, event.memory_inserted.status) == (
        held.source_id,
        PENDING,
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_validate_only_reports_the_held_claim_and_stores_nothing(trust_stack, policy):
    stack = trust_stack(policy)
    agent = stack.client(AGENT)
    checked = agent.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content=SQUIER,
            validate_only=True,
            metadata=sources_pb2.InsertMetadata(save_intent="explicit_user_request"),
        )
    )
    assert (checked.status, checked.save_intent_held, checked.source_id) == (PENDING, True, "")
    assert "explicit_user_request" in checked.save_intent_held_reason
    assert pending_ids(stack.client(USER)) == []


@pytest.mark.parametrize("policy", POLICIES)
def test_a_trusted_claim_behaves_as_before(trust_stack, policy):
    stack = trust_stack(policy)
    user = stack.client(USER)
    for key, claim in ((AGENT, "client_auto_save"), (USER, "explicit_user_request")):
        saved = insert(stack.client(key), f"{SQUIER} ({claim})", save_intent=claim)
        assert (saved.status, saved.save_intent_held, saved.save_intent_held_reason) == (
            ACTIVE,
            False,
            "",
        )
        (receipt,) = receipts_of(stack.client(ADMIN_A), saved.source_id)
        assert (receipt.save_intent, receipt.save_intent_held) == (claim, False)
    assert len(search_ids(user, "Squier")) == 2


def test_only_a_user_approves_a_held_claim_even_where_agents_may_self_approve(trust_stack):
    # Self-approval allowed for the deployment: still not for a held claim.
    stack = trust_stack("review_pending", memory__allow_self_approval=True)
    agent, user = stack.client(AGENT), stack.client(USER)
    unmarked = insert(agent, "I like oolong")  # pending by policy, not held
    held = insert(agent, SQUIER, save_intent="explicit_user_request")
    with pytest.raises(grpc.RpcError) as e:
        review(agent, held.source_id, 1, review_pb2.DECISION_APPROVE)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(e.value) == "APPROVAL_REQUIRES_PERSON"
    assert search_ids(user, "Squier") == []
    # the deployment's own rule still lets it approve what was pending by policy only
    assert review(agent, unmarked.source_id, 1, review_pb2.DECISION_APPROVE).status == ACTIVE

    approved = review(user, held.source_id, 1, review_pb2.DECISION_APPROVE)
    assert (approved.status, approved.receipt.principal_id) == (ACTIVE, "ann")
    assert search_ids(user, "Squier") == [held.source_id]
    source = get_source(user, held.source_id)
    assert (source.save_intent, source.save_intent_held) == ("user_confirmed", True)
    receipts = receipts_of(stack.client(ADMIN_A), held.source_id)
    trail = [(r.action, r.save_intent, r.save_intent_held) for r in receipts]
    assert trail == [
        ("memory.insert", "explicit_user_request", True),
        ("memory.review.approve", "", False),
    ]
    assert stack.client(ADMIN_A).VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).ok


def test_the_held_flag_is_part_of_the_receipt_chain(trust_stack):
    stack = trust_stack()
    admin = stack.client(ADMIN_A)
    held = insert(stack.client(AGENT), SQUIER, save_intent="user_confirmed")
    insert(admin, "I like oolong")  # a receipt without a claim: hashed as before
    assert admin.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).ok
    stack.sql(
        "UPDATE audit_receipts SET save_intent_held = :f WHERE target_id = :s",
        f=False,
        s=held.source_id,
    )
    verified = admin.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest())
    assert not verified.ok and verified.first_invalid_sequence == held.receipt.sequence


def test_a_retry_of_a_held_insert_returns_the_held_result(trust_stack):
    stack = trust_stack()
    agent = stack.client(AGENT)
    first = insert(agent, SQUIER, request_id="r-1", save_intent="explicit_user_request")
    again = insert(agent, SQUIER, request_id="r-1", save_intent="explicit_user_request")
    assert again.deduplicated and again.source_id == first.source_id
    assert (again.status, again.save_intent_held) == (PENDING, True)
    assert again.save_intent_held_reason == first.save_intent_held_reason


def test_capabilities_name_the_caller_trusted_intents(trust_stack):
    stack = trust_stack()
    request = capabilities_pb2.GetCapabilitiesRequest()
    agent = stack.client(AGENT).GetCapabilities(request)
    assert list(agent.caller.trusted_save_intents) == ["client_auto_save"]
    user = stack.client(USER).GetCapabilities(request)
    assert sorted(user.caller.trusted_save_intents) == sorted(config.SaveIntentName)


def test_a_key_trusted_for_nothing_has_every_claim_held(make_stack):
    stack = make_stack(auth__api_keys=[*(k.config() for k in KEYS), agent_config()])
    for claim in ("client_auto_save", *USER_CLAIMS):
        assert insert(stack.client(AGENT), SQUIER, save_intent=claim).save_intent_held
    # no claim at all is not a claim: the policy decides as before
    assert insert(stack.client(AGENT), SQUIER).status == ACTIVE


def test_an_unknown_trusted_intent_stops_start_up_naming_the_key(tmp_path):
    bad = {**AGENT.config(), "trusted_save_intents": ["whatever_the_model_says"]}
    with pytest.raises(config.ConfigError) as e:
        config.load(None, {"auth.api_keys": [bad]})
    assert "trusted_save_intents" in str(e.value)


def test_oidc_principals_are_trusted_by_kind(make_stack, idp):  # noqa: F811
    stack = make_stack(
        auth__oidc={
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "jwks_url": idp["jwks"].url,
            "tenant_claim": "org",
            "kind_claim": "agentmem_kind",
            "trusted_save_intents_by_kind": {"agent": ["client_auto_save"]},
        }
    )
    scope = "memory.read memory.write"
    agent = stack.client(token=token(idp, sub="codex", agentmem_kind="agent", scope=scope))
    user = stack.client(token=token(idp, sub="ann", agentmem_kind="user", scope=scope))
    held = insert(agent, SQUIER, save_intent="explicit_user_request")
    assert (held.status, held.save_intent_held) == (PENDING, True)
    assert insert(agent, SQUIER, save_intent="client_auto_save").status == ACTIVE
    # a kind the mapping does not list keeps every intent
    assert insert(user, SQUIER, save_intent="explicit_user_request").status == ACTIVE
    caps = agent.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    assert list(caps.caller.trusted_save_intents) == ["client_auto_save"]
