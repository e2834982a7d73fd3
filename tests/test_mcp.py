"""The MCP server, driven by the MCP SDK's own client over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentmem.v1 import common_pb2, review_pb2
from tests.harness import ADMIN_A, ROOT, free_port
from tests.test_facts import SQUIER

TOOLS = {
    "memory_insert",
    "memory_search",
    "memory_ask",
    "memory_explain",
    "memory_sources_list",
    "memory_pending_list",
    "memory_pending_approve",
    "memory_pending_reject",
    "memory_fact_search",
    "memory_profile_get",
    "memory_thread_mode_get",
    "memory_thread_mode_set",
    "memory_source_classify",
}


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def payload(result) -> dict:
    assert not result.is_error, text(result)
    return result.structured_content if result.structured_content else json.loads(text(result))


async def exercise(session: ClientSession, stack) -> None:
    await session.initialize()
    names = {t.name for t in (await session.list_tools()).tools}
    assert names >= TOOLS
    insert_tool = next(t for t in (await session.list_tools()).tools if t.name == "memory_insert")
    assert "Do NOT call" in insert_tool.description

    # the opencode case through MCP: no save intent under require_save_intent
    refused = await session.call_tool("memory_insert", {"content": SQUIER})
    assert refused.is_error and "SAVE_INTENT_REQUIRED" in text(refused)
    assert "Squier" not in text(refused) and ADMIN_A.token not in text(refused)
    assert payload(await session.call_tool("memory_sources_list", {})).get("sources", []) == []

    saved = payload(
        await session.call_tool(
            "memory_insert",
            {
                "content": SQUIER,
                "save_intent": "explicit_user_request",
                "save_intent_source": "opencode",
            },
        )
    )
    hits = payload(await session.call_tool("memory_search", {"query": "Squier guitar"}))
    assert [h["source_id"] for h in hits["hits"]] == [saved["source_id"]]
    facts = payload(await session.call_tool("memory_fact_search", {"query": "Squier"}))
    assert facts["facts"][0]["save_intent_source"] == "opencode"

    # a cold source is not returned
    cold = payload(
        await session.call_tool(
            "memory_source_classify",
            {"source_id": saved["source_id"], "classification": "cold", "expected_revision": 1},
        )
    )
    assert cold["revision"] == "2"
    assert (
        payload(await session.call_tool("memory_search", {"query": "Squier"})).get("hits", []) == []
    )

    # the MCP server holds no policy: a change through gRPC applies at once
    stack.client().SetInsertPolicy(
        review_pb2.SetInsertPolicyRequest(
            expected_revision=1, insert_policy=common_pb2.INSERT_POLICY_PERMISSIVE
        )
    )
    assert not (await session.call_tool("memory_insert", {"content": "I like tea"})).is_error


def test_mcp_over_stdio(stack):
    stack.client().SetInsertPolicy(
        review_pb2.SetInsertPolicyRequest(
            expected_revision=0, insert_policy=common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT
        )
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli.main", "mcp"],
        cwd=str(ROOT),
        env={**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token},
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await exercise(session, stack)

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.fixture
def http_mcp(stack):
    port = free_port()
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
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while True:  # wait until it accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_mcp_over_streamable_http(stack, http_mcp):
    stack.client().SetInsertPolicy(
        review_pb2.SetInsertPolicyRequest(
            expected_revision=0, insert_policy=common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT
        )
    )

    async def main() -> None:
        async with streamable_http_client(http_mcp) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, stack)

    asyncio.run(asyncio.wait_for(main(), 60))
