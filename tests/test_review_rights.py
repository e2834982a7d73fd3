"""Who may approve or reject a pending memory, through real servers on every surface: only a
person decides a held claim (agents and services get APPROVAL_REQUIRES_PERSON, on gRPC, MCP,
the app-server, the CLI and the console); a memory pending by the insert policy alone
follows the table of docs/save-intent-trust.md. A refusal changes nothing."""

from __future__ import annotations

import asyncio
import os
import sys

import grpc
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agentmem.cli.main import main
from agentmem.v1 import audit_pb2, review_pb2, sources_pb2
from tests.app_server_support import StdioHost
from tests.harness import ADMIN_A, KEYS, ROOT, Key, reason
from tests.memory_helpers import insert, search_ids
from tests.test_oidc import AUDIENCE, ISSUER, idp, token  # noqa: F401 (idp: a fixture)

SCOPES = ("memory.read", "memory.write", "memory.review", "memory.content.read")
INSERTER = Key(
    "tok-rights-inserter", "opencode", "tenant-a", SCOPES, "agent", ("client_auto_save",)
)
OTHER_AGENT = Key("tok-rights-agent", "codex", "tenant-a", SCOPES, "agent", ("client_auto_save",))
SERVICE = Key("tok-rights-service", "mcp-server", "tenant-a", SCOPES, "service")
USER = Key("tok-rights-user", "ann", "tenant-a", SCOPES)
REVIEWERS = {"user": USER, "own agent": INSERTER, "other agent": OTHER_AGENT, "service": SERVICE}
APPROVE, REJECT = review_pb2.DECISION_APPROVE, review_pb2.DECISION_REJECT
OK, PERSON, SELF = "ok", "APPROVAL_REQUIRES_PERSON", "SELF_APPROVAL_DENIED"
HELD, POLICY = "held claim", "ordinary pending"

# (state, reviewer, decision) → outcome with the defaults, and with memory.allow_self_approval
# and memory.allow_service_review both on.
TABLE = {
    (HELD, "user", APPROVE): (OK, OK),
    (HELD, "user", REJECT): (OK, OK),
    (HELD, "own agent", APPROVE): (PERSON, PERSON),
    (HELD, "own agent", REJECT): (PERSON, PERSON),
    (HELD, "other agent", APPROVE): (PERSON, PERSON),
    (HELD, "other agent", REJECT): (PERSON, PERSON),
    (HELD, "service", APPROVE): (PERSON, PERSON),
    (HELD, "service", REJECT): (PERSON, PERSON),
    (POLICY, "user", APPROVE): (OK, OK),
    (POLICY, "user", REJECT): (OK, OK),
    (POLICY, "own agent", APPROVE): (SELF, OK),
    (POLICY, "own agent", REJECT): (OK, OK),
    (POLICY, "other agent", APPROVE): (OK, OK),
    (POLICY, "other agent", REJECT): (OK, OK),
    (POLICY, "service", APPROVE): (PERSON, OK),
    (POLICY, "service", REJECT): (PERSON, OK),
}


@pytest.fixture
def rights_stack(make_stack):
    def make(allowed: bool = False):
        return make_stack(
            memory__insert_policy="review_pending",
            memory__allow_self_approval=allowed,
            memory__allow_service_review=allowed,
            auth__api_keys=[k.config() for k in (*KEYS, *REVIEWERS.values())],
        )

    return make


def pending(stack, state: str, text: str) -> str:
    """A memory the inserting agent saved: a claim it is not trusted for, or no claim."""
    intent = "explicit_user_request" if state == HELD else ""
    r = insert(stack.client(INSERTER), text, save_intent=intent)
    assert r.status == sources_pb2.STATUS_PENDING_REVIEW and r.save_intent_held == (state == HELD)
    return r.source_id


def review(client, source_id: str, decision) -> review_pb2.ReviewMemoryResponse:
    return client.ReviewMemory(
        review_pb2.ReviewMemoryRequest(source_id=source_id, expected_revision=1, decision=decision)
    )


def trail(stack, source_id: str) -> list[str]:
    receipts = (
        stack.client(ADMIN_A)
        .ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(target_id=source_id))
        .receipts
    )
    return [r.action for r in receipts]


def unchanged(stack, source_id: str) -> None:
    """Still pending at revision 1, with only its insert's receipt, and not retrievable."""
    s = stack.client(USER).get_source(source_id=source_id)
    assert (s.status, s.revision) == (sources_pb2.STATUS_PENDING_REVIEW, 1)
    assert trail(stack, source_id) == ["memory.insert"]


@pytest.mark.parametrize("allowed", [False, True], ids=["defaults", "self-and-service-allowed"])
def test_who_may_review_follows_the_table_through_grpc(rights_stack, allowed):
    stack = rights_stack(allowed)
    for n, ((state, who, decision), outcomes) in enumerate(sorted(TABLE.items())):
        want = outcomes[allowed]
        word = f"zqrights{n}x"
        source_id = pending(stack, state, f"I like the lantern {word}")
        row = (state, who, review_pb2.Decision.Name(decision))
        if want == OK:
            done = review(stack.client(REVIEWERS[who]), source_id, decision)
            status = (
                sources_pb2.STATUS_ACTIVE if decision == APPROVE else sources_pb2.STATUS_REJECTED
            )
            assert (done.status, done.revision, done.receipt.principal_id) == (
                status,
                2,
                REVIEWERS[who].principal,
            ), row
            found = search_ids(stack.client(USER), word)
            assert found == ([source_id] if decision == APPROVE else []), row
            continue
        with pytest.raises(grpc.RpcError) as e:
            review(stack.client(REVIEWERS[who]), source_id, decision)
        assert (e.value.code(), reason(e.value)) == (grpc.StatusCode.PERMISSION_DENIED, want), row
        assert word not in (e.value.details() or ""), row
        unchanged(stack, source_id)
        assert search_ids(stack.client(USER), word) == [], row


def test_a_person_signed_in_with_oidc_decides_a_held_claim_and_an_oidc_agent_cannot(
    make_stack,
    idp,  # noqa: F811
):
    stack = make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, INSERTER)],
        auth__oidc={
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "jwks_url": idp["jwks"].url,
            "tenant_claim": "org",
            "kind_claim": "agentmem_kind",
        },
    )
    scope = "memory.read memory.review"
    agent = stack.client(token=token(idp, sub="codex", agentmem_kind="agent", scope=scope))
    person = stack.client(token=token(idp, sub="ann", agentmem_kind="user", scope=scope))
    held = pending(stack, HELD, "I like the lantern zqoidcx")
    for decision in (APPROVE, REJECT):
        with pytest.raises(grpc.RpcError) as e:
            review(agent, held, decision)
        assert reason(e.value) == PERSON
    approved = review(person, held, APPROVE)
    assert (approved.status, approved.receipt.principal_id) == (sources_pb2.STATUS_ACTIVE, "ann")


def test_mcp_tools_refuse_a_service_key_deciding_a_held_claim(rights_stack):
    stack = rights_stack(allowed=True)
    held = pending(stack, HELD, "I like the lantern zqmcpx")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli.main", "mcp"],
        cwd=str(ROOT),
        env={**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": SERVICE.token},
    )
    texts = []

    async def session() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for tool in ("memory_pending_approve", "memory_pending_reject"):
                result = await s.call_tool(tool, {"source_id": held, "expected_revision": 1})
                assert result.is_error
                texts.append("".join(getattr(c, "text", "") for c in result.content))

    asyncio.run(asyncio.wait_for(session(), 120))
    assert all(t.startswith(f"{PERSON}:") for t in texts), texts
    assert not any("lantern" in t or SERVICE.token in t for t in texts)
    unchanged(stack, held)


def test_the_app_server_and_the_cli_refuse_an_agent_deciding_a_held_claim(
    rights_stack, tmp_path, monkeypatch, capsys
):
    stack = rights_stack()
    held = pending(stack, HELD, "I like the lantern zqbridgex")
    host = StdioHost(stack.address, OTHER_AGENT.token, tmp_path)
    try:
        host.initialize()
        for method in ("memory/review/approve", "memory/review/reject"):
            error = host.error(method, {"sourceId": held, "expectedRevision": 1})
            assert (error["code"], error["data"]["reason"]) == (-32600, PERSON), error
            assert error["data"]["hold"] == "save_intent"
    finally:
        host.close()
    assert "lantern" not in host.stderr and "Traceback" not in host.stderr

    monkeypatch.setenv("AGENTMEM_TOKEN", OTHER_AGENT.token)
    with pytest.raises(SystemExit) as e:
        main(["memories", "review", held, "approve", "--addr", stack.address])
    err = capsys.readouterr().err
    assert e.value.code != 0 and PERSON in err and "lantern" not in err
    unchanged(stack, held)


def test_the_console_says_why_a_service_key_cannot_decide_a_held_claim(rights_stack):
    from agentmem.console import labels
    from agentmem.console.gateway import Gateway
    from agentmem.console.gateway_values import GatewayError

    stack = rights_stack(allowed=True)
    held = pending(stack, HELD, "I like the lantern zqconsolex")

    async def decide() -> GatewayError:
        gateway = Gateway(stack.address)
        await gateway.open()
        try:
            await gateway.review(SERVICE.token, held, 1, "approve")
        except GatewayError as e:
            return e
        finally:
            await gateway.close()
        raise AssertionError("the service's approval was not refused")

    refused = asyncio.run(decide())
    assert (refused.code, refused.reason) == ("PERMISSION_DENIED", PERSON)
    shown = labels.refusal(refused.reason, refused.message, refused.metadata)
    assert "only a person may approve or reject" in shown and "lantern" not in shown
    unchanged(stack, held)
