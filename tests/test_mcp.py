"""The MCP server, driven by the MCP SDK's own client over stdio and streamable HTTP: every
tool, review, the full save-intent matrix, catalog errors without echo, schemas and
annotations, and bearer-token authentication on HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import agentmem
from agentmem.client import person_credential
from tests.harness import ADMIN_A, READER_A, ROOT, free_port, wait_until
from tests.test_facts import SQUIER

READ_ONLY = {
    "memory_search",
    "memory_ask",
    "memory_explain",
    "memory_sources_list",
    "memory_pending_list",
    "memory_fact_search",
    "memory_profile_get",
    "memory_thread_mode_get",
}
WRITES = {
    "memory_insert",
    "memory_pending_approve",
    "memory_pending_reject",
    "memory_thread_mode_set",
    "memory_source_classify",
    "memory_fact_retract",
    "memory_append",
}
TOOLS = READ_ONLY | WRITES
MARKERS = ("explicit_user_request", "user_confirmed", "client_auto_save")


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def payload(result) -> dict:
    assert not result.is_error, text(result)
    return result.structured_content if result.structured_content else json.loads(text(result))


async def refused(session: ClientSession, tool: str, args: dict, reason: str) -> str:
    result = await session.call_tool(tool, args)
    assert result.is_error, text(result)
    assert text(result).startswith(f"{reason}:"), text(result)
    assert ADMIN_A.token not in text(result)
    return text(result)


def as_person(stack) -> dict[str, str]:
    """The server's environment with the person's credential, allowed on purpose: these
    tests call every tool, the person's decisions among them."""
    env = {**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token}
    return {**env, person_credential.ENV: "1"}


def stored(stack) -> int:
    """Every memory in the tenant, pending and rejected ones included."""
    return len(stack.client().list_memories(status_filter="all", page_size=1000).memories)


async def check_listing(session: ClientSession, init) -> None:
    assert init.server_info.name == "agentmem"
    assert init.server_info.version == agentmem.__version__
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    assert "Do NOT call" in tools["memory_insert"].description
    for name, t in tools.items():
        assert t.annotations is not None and t.annotations.title, name
        assert t.annotations.read_only_hint is (name in READ_ONLY), name
        # a typed output schema: the response message's fields, closed
        assert t.output_schema["type"] == "object" and t.output_schema["properties"], name
        assert t.output_schema["additionalProperties"] is False, name
    assert tools["memory_pending_reject"].annotations.destructive_hint is True
    assert tools["memory_pending_approve"].annotations.destructive_hint is False
    props = tools["memory_insert"].input_schema["properties"]
    enum = json.dumps(props["save_intent"])
    assert all(m in enum for m in MARKERS)
    assert tools["memory_thread_mode_set"].input_schema["properties"]["mode"]["enum"] == [
        "enabled",
        "disabled",
    ]
    classify = tools["memory_source_classify"].input_schema["properties"]
    assert classify["classification"]["enum"] == ["active", "cold"]
    for bounded in ("memory_search", "memory_explain"):  # the gateway's own bounds
        limit = tools[bounded].input_schema["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"]) == (1, 100), bounded
    # outputs say what inputs take: integer revisions, short enum names
    mode_out = tools["memory_thread_mode_set"].output_schema
    assert mode_out["properties"]["revision"] == {"type": "integer"}
    assert mode_out["$defs"]["agentmem.v1.MemoryMode"]["enum"] == ["enabled", "disabled"]
    insert_out = tools["memory_insert"].output_schema
    assert set(insert_out["properties"]) >= {"source_id", "revision", "status", "receipt"}


async def save_intent_matrix(session: ClientSession, stack) -> None:
    """Every marker, no marker and an unknown marker under each insert policy."""
    admin = stack.client()
    revision = admin.get_insert_policy().revision
    for policy in ("permissive", "require_save_intent", "review_pending"):
        revision = admin.set_insert_policy(
            insert_policy=policy, expected_revision=revision
        ).revision
        for marker in (*MARKERS, None, "because_i_said_so"):
            args = {"content": f"Squier note taken under {policy} with {marker}"}
            if marker:
                args["save_intent"] = marker
            before = stored(stack)
            if marker == "because_i_said_so":
                message = await refused(session, "memory_insert", args, "SAVE_INTENT_INVALID")
                assert "Squier" not in message and "because_i_said_so" not in message
                assert stored(stack) == before  # nothing stored
                continue
            if marker is None and policy == "require_save_intent":
                message = await refused(session, "memory_insert", args, "SAVE_INTENT_REQUIRED")
                assert "Squier" not in message
                assert stored(stack) == before
                continue
            saved = payload(await session.call_tool("memory_insert", args))
            expected = (
                "pending_review" if marker is None and policy == "review_pending" else "active"
            )
            assert saved["status"] == expected, (policy, marker)
            assert stored(stack) == before + 1


async def every_tool(session: ClientSession, stack) -> None:
    admin = stack.client()
    revision = admin.get_insert_policy().revision
    admin.set_insert_policy(insert_policy="review_pending", expected_revision=revision)

    saved = payload(
        await session.call_tool(
            "memory_insert",
            {
                "content": SQUIER,
                "save_intent": "explicit_user_request",
                "save_intent_source": "opencode",
                "save_intent_evidence": "user said remember this",
                "thread_id": "t-mcp",
                "request_id": "mcp-1",
            },
        )
    )
    again = payload(
        await session.call_tool(
            "memory_insert",
            {  # a retry: the same request (a reused request_id with other fields is refused)
                "content": SQUIER,
                "save_intent": "explicit_user_request",
                "save_intent_source": "opencode",
                "save_intent_evidence": "user said remember this",
                "thread_id": "t-mcp",
                "request_id": "mcp-1",
            },
        )
    )
    assert again["source_id"] == saved["source_id"] and again["deduplicated"] is True
    # an unknown tool is a protocol error; an unknown argument is ignored, as on the bridge
    with pytest.raises(MCPError) as unknown:
        await session.call_tool("memory_no_such_tool", {"query": "x"})
    assert unknown.value.error.code == -32602
    hits = payload(
        await session.call_tool("memory_search", {"query": "Squier guitar", "not_ours": 1})
    )
    assert [h["source_id"] for h in hits["hits"]] == [saved["source_id"]]
    explained = payload(await session.call_tool("memory_explain", {"query": "Squier"}))
    assert explained["entries"][0]["reason"] == "selected"
    facts = payload(await session.call_tool("memory_fact_search", {"query": "Squier"}))
    assert facts["facts"][0]["save_intent_source"] == "opencode"
    by_intent = payload(
        await session.call_tool("memory_fact_search", {"save_intent": "client_auto_save"})
    )
    assert by_intent == {"facts": []}  # an empty result keeps its fields
    profile = payload(await session.call_tool("memory_profile_get", {}))
    assert profile["entries"]
    answer = payload(
        await session.call_tool(
            "memory_ask", {"question": "Which guitar does the user have? A Squier?"}
        )
    )
    assert answer["provenance"][0]["source_id"] == saved["source_id"]

    # review: two pending inserts; approve one, reject the other, a stale revision fails
    first = payload(await session.call_tool("memory_insert", {"content": "I drink oolong"}))
    second = payload(await session.call_tool("memory_insert", {"content": "I hate mornings"}))
    assert first["status"] == second["status"] == "pending_review"
    pending = payload(await session.call_tool("memory_pending_list", {}))
    assert {m["source_id"] for m in pending["memories"]} == {
        first["source_id"],
        second["source_id"],
    }
    stale = await refused(
        session,
        "memory_pending_approve",
        {"source_id": first["source_id"], "expected_revision": 9},
        "REVISION_MISMATCH",
    )
    assert "current revision is 1" in stale
    approved = payload(
        await session.call_tool(
            "memory_pending_approve", {"source_id": first["source_id"], "expected_revision": 1}
        )
    )
    assert approved["status"] == "active"
    rejected = payload(
        await session.call_tool(
            "memory_pending_reject", {"source_id": second["source_id"], "expected_revision": 1}
        )
    )
    assert rejected["status"] == "rejected"
    assert payload(await session.call_tool("memory_pending_list", {}))["memories"] == []
    await refused(
        session,
        "memory_pending_approve",
        {"source_id": "src_missing", "expected_revision": 1},
        "NOT_FOUND",
    )

    # classification: a cold source is not returned
    cold = payload(
        await session.call_tool(
            "memory_source_classify",
            {"source_id": saved["source_id"], "classification": "cold", "expected_revision": 1},
        )
    )
    assert cold["revision"] == 2 and cold["classification"] == "cold"
    # what a tool returns can be passed back: the revision and the classification read
    back = payload(
        await session.call_tool(
            "memory_source_classify",
            {
                "source_id": saved["source_id"],
                "classification": cold["previous_classification"],
                "expected_revision": cold["revision"],
            },
        )
    )
    cold = payload(
        await session.call_tool(
            "memory_source_classify",
            {
                "source_id": saved["source_id"],
                "classification": back["previous_classification"],
                "expected_revision": back["revision"],
            },
        )
    )
    assert (cold["revision"], cold["classification"]) == (4, "cold")
    assert payload(await session.call_tool("memory_search", {"query": "Squier"})) == {"hits": []}
    listed = payload(await session.call_tool("memory_sources_list", {"classification": "cold"}))
    assert [s["source_id"] for s in listed["sources"]] == [saved["source_id"]]
    # an erased source reads as erased, never as revoked
    gone = admin.insert_memory(content="an MCP memory to erase")
    admin.erase_source(source_id=gone.source_id, expected_revision=1)
    erased = payload(await session.call_tool("memory_sources_list", {"effective_state": "erased"}))[
        "sources"
    ]
    assert {s["source_id"]: s["effective_retrieval_state"] for s in erased}[gone.source_id] == (
        "erased"
    )

    # thread memory mode
    mode = payload(await session.call_tool("memory_thread_mode_get", {"thread_id": "t-mcp"}))
    assert mode["revision"] == 0
    changed = payload(
        await session.call_tool(
            "memory_thread_mode_set",
            {"thread_id": "t-mcp", "mode": "disabled", "expected_revision": mode["revision"]},
        )
    )
    assert (changed["mode"], changed["revision"]) == ("disabled", 1)
    await refused(
        session,
        "memory_insert",
        {"content": "x", "save_intent": "user_confirmed", "thread_id": "t-mcp"},
        "THREAD_MEMORY_DISABLED",
    )

    # argument errors come from the catalog and never echo the input
    message = await refused(
        session,
        "memory_thread_mode_set",
        {"thread_id": "t-mcp", "mode": "my SSN is 078-05-1120", "expected_revision": 1},
        "INVALID_FIELD",
    )
    assert "078-05-1120" not in message and "mode: must be one of" in message
    message = await refused(
        session, "memory_insert", {"content": {"secret": "my SSN is 078"}}, "INVALID_FIELD"
    )
    assert "078" not in message and "content: must be a string" in message
    await refused(session, "memory_source_classify", {"source_id": "x"}, "INVALID_FIELD")


async def facts_over_time(session: ClientSession, stack) -> None:
    client = stack.client()
    for content, day in (("I live in Lisbon", "2023-01-01"), ("I live in Berlin", "2024-01-01")):
        client.insert_memory(content=content, observed_at=day, save_intent="explicit_user_request")

    def lives(found: dict) -> list[str]:
        return [f["object"] for f in found.get("facts", []) if f["predicate"] == "lives in"]

    now = payload(await session.call_tool("memory_fact_search", {"query": "live"}))
    then = payload(
        await session.call_tool("memory_fact_search", {"query": "live", "as_of": "2023-06-01"})
    )
    every = payload(
        await session.call_tool("memory_fact_search", {"query": "live", "include_superseded": True})
    )
    assert (lives(now), lives(then), sorted(lives(every))) == (
        ["Berlin"],
        ["Lisbon"],
        ["Berlin", "Lisbon"],
    )
    profile = payload(await session.call_tool("memory_profile_get", {"as_of": "2023-06-01"}))
    assert {e["key"]: e["value"] for e in profile["entries"]}["user lives in"] == "Lisbon"
    answer = payload(
        await session.call_tool(
            "memory_ask", {"question": "where do I live", "as_of": "2023-06-01"}
        )
    )
    assert "Lisbon" in answer["answer"]
    berlin = next(f for f in now["facts"] if f["object"] == "Berlin")
    done = payload(await session.call_tool("memory_fact_retract", {"fact_id": berlin["fact_id"]}))
    assert done["receipt"]["action"] == "fact.retract"
    assert lives(payload(await session.call_tool("memory_fact_search", {"query": "live"}))) == [
        "Lisbon"
    ]
    message = await refused(
        session, "memory_fact_search", {"as_of": "my SSN is 078-05-1120"}, "INVALID_FIELD"
    )
    assert "078" not in message and "as_of" in message


async def exercise(session: ClientSession, stack) -> None:
    init = await session.initialize()
    await check_listing(session, init)
    await every_tool(session, stack)
    await save_intent_matrix(session, stack)
    await facts_over_time(session, stack)


def test_mcp_over_stdio(stack):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli.main", "mcp"],
        cwd=str(ROOT),
        env=as_person(stack),
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await exercise(session, stack)

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.fixture
def http_mcp(stack):
    port = free_port()
    env = {**os.environ, "AGENTMEM_ADDR": stack.address}
    env.pop("AGENTMEM_TOKEN", None)  # HTTP needs no server credential
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentmem.cli.main",
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--allow-person-credential",  # these tests act as the person, on purpose
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    def accepting() -> bool:
        assert proc.poll() is None
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    wait_until(accepting, 30, "the MCP server accepting connections")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@asynccontextmanager
async def http_session(url: str, token: str):
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        yield session


def test_mcp_over_streamable_http(stack, http_mcp):
    async def main() -> None:
        async with http_session(http_mcp, ADMIN_A.token) as session:
            await exercise(session, stack)

    asyncio.run(asyncio.wait_for(main(), 120))


def _post(url: str, token: str | None) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_http_transport_needs_a_valid_bearer_token_and_acts_as_its_principal(stack, http_mcp):
    assert _post(http_mcp, None) == 401
    assert _post(http_mcp, "not-a-known-token") == 401

    async def main() -> None:
        # a reader is its own principal: it can search, but not write
        async with http_session(http_mcp, READER_A.token) as session:
            await session.initialize()
            assert not (await session.call_tool("memory_search", {"query": "x"})).is_error
            denied = await session.call_tool(
                "memory_insert", {"content": "x", "save_intent": "user_confirmed"}
            )
            assert denied.is_error and text(denied).startswith("MISSING_SCOPE")
            assert "memory.write" in text(denied)
        async with http_session(http_mcp, ADMIN_A.token) as session:
            await session.initialize()
            saved = await session.call_tool(
                "memory_insert", {"content": "I like tea", "save_intent": "user_confirmed"}
            )
            assert not saved.is_error, text(saved)

    asyncio.run(asyncio.wait_for(main(), 60))
    receipts = stack.client().list_audit_receipts().receipts
    assert [r.principal_id for r in receipts if r.action.startswith("memory.insert")] == ["alice"]


def test_confusable_ids_are_refused_by_the_tools_as_by_the_gateway(stack, http_mcp):
    async def main() -> None:
        async with http_session(http_mcp, ADMIN_A.token) as session:
            await session.initialize()
            for tool, args in (
                ("memory_thread_mode_get", {"thread_id": "t\u200b1"}),
                ("memory_search", {"query": "x", "thread_id": "t\u202e1"}),
                ("memory_pending_approve", {"source_id": "src\u2066", "expected_revision": 1}),
            ):
                message = await refused(session, tool, args, "INVALID_FIELD")
                assert "invisible" in message

    asyncio.run(asyncio.wait_for(main(), 60))


def test_with_an_oidc_issuer_a_401_names_the_protected_resource_metadata(stack):
    port = free_port()
    env = {**os.environ, "AGENTMEM_ADDR": stack.address}
    env.pop("AGENTMEM_TOKEN", None)
    issuer = "https://issuer.example"
    command = [sys.executable, "-m", "agentmem.cli.main", "mcp", "--transport", "http"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--oidc-issuer", issuer],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"

    def accepting() -> bool:
        assert proc.poll() is None
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    try:
        wait_until(accepting, 30, "the MCP server accepting connections")
        request = urllib.request.Request(f"{base}/mcp", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        challenge = refused.value.headers["WWW-Authenticate"]
        where = f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
        assert challenge.startswith("Bearer ") and where in challenge
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            with urllib.request.urlopen(base + path, timeout=30) as response:
                metadata = json.loads(response.read())
            assert metadata["resource"] == f"{base}/mcp"
            assert metadata["authorization_servers"] == [issuer]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_memory_append_adds_a_sessions_turns(stack):
    from tests.test_appends import start

    sid = start(stack.client()).source_id
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli.main", "mcp"],
        cwd=str(ROOT),
        env=as_person(stack),
    )
    turn = {"role": "user", "content": "the zqmcp turn"}

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            args = {"source_id": sid, "expected_revision": 1, "messages": [turn]}
            done = payload(await session.call_tool("memory_append", args))
            assert (done["revision"], done["message_count"], done["status"]) == (2, 3, "active")
            stale = await refused(session, "memory_append", args, "REVISION_MISMATCH")
            assert "current revision is 2" in stale
            empty = {"source_id": sid, "expected_revision": 2, "messages": []}
            await refused(session, "memory_append", empty, "INVALID_FIELD")

    asyncio.run(asyncio.wait_for(main(), 120))
    assert stack.client().search_memories(query="zqmcp").hits[0].source_id == sid
