"""Hosts act for agents: `agentmem mcp` and `agentmem app-server` refuse a person's
credential unless told to allow it, and what only the person decides is refused to an
agent with words that say who decides and where."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest
from mcp import Client

from agentmem.client import AsyncClient, person_credential
from agentmem.mcp import server as mcp_server
from agentmem_launcher import dev_credential
from tests.app_server_support import StdioHost, WebSocketHost
from tests.harness import ROOT, free_port, wait_until

# The keys `agentmem up` writes: the person's and the agent's (tenant "dev").
PERSON = dev_credential.DevCredential("am_dev_person", None, False, dev_credential.PERSON)
AGENT = dev_credential.DevCredential("am_agent_host", None, False, dev_credential.AGENT)
STATEMENT = "I have a yellow Squier Tele with a black pickguard"


@pytest.fixture
def up_like(make_stack):
    """A stack with `agentmem up`'s two keys, under `review_pending`."""
    return make_stack(
        auth__api_keys=[dev_credential.api_key(c) for c in (PERSON, AGENT)],
        memory__insert_policy="review_pending",
    )


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentmem.cli.main", *args]


def environment(stack, token: str | None = None, allow: bool = False) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("AGENTMEM_TOKEN", person_credential.ENV)
    }
    env["AGENTMEM_ADDR"] = stack.address
    if token is not None:
        env["AGENTMEM_TOKEN"] = token
    if allow:
        env[person_credential.ENV] = "1"
    return env


def refused_at_start(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()  # one line says why, and what to do
    assert line.startswith("agentmem: PERSON_CREDENTIAL: AGENTMEM_TOKEN")
    assert "data/agent-token" in line and person_credential.FLAG in line
    assert PERSON.token not in done.stdout + done.stderr
    return line


def test_agentmem_mcp_refuses_a_persons_credential_at_start(up_like):
    refused_at_start(command("mcp"), environment(up_like, PERSON.token))


@pytest.mark.parametrize(
    ("token", "allow"), [(AGENT.token, False), (PERSON.token, True)], ids=["agent", "allowed"]
)
def test_agentmem_mcp_starts_with_an_agents_credential_or_when_allowed(up_like, token, allow):
    args = command("mcp")
    if allow:
        args.append(person_credential.FLAG)
    proc = subprocess.Popen(args, env=environment(up_like, token), cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    try:
        with pytest.raises(subprocess.TimeoutExpired):  # serving, waiting for its host
            proc.wait(timeout=8)
    finally:
        proc.kill()
        proc.wait()


def test_agentmem_mcp_over_http_refuses_a_persons_bearer_token(up_like):
    port = free_port()
    proc = subprocess.Popen(
        command("mcp", "--transport", "http", "--port", str(port)),
        env=environment(up_like),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    def post(token: str) -> int:
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}).encode()  # fmt: skip
        request = urllib.request.Request(url, data=hello, method="POST", headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    try:
        wait_until(lambda: post(AGENT.token) == 200, 60, "the MCP server serving")
        assert post(PERSON.token) == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_agentmem_app_server_refuses_a_persons_credential_at_start(up_like):
    refused_at_start(
        command("app-server", "--addr", up_like.address), environment(up_like, PERSON.token)
    )


def test_the_bridges_initialize_refuses_a_persons_credential(up_like, tmp_path):
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        command("app-server", "--addr", up_like.address, "--listen", "ws://127.0.0.1:0",
                "--port-file", str(port_file)),
        env=environment(up_like), cwd=ROOT, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: port_file.exists() and port_file.read_text(), 60, "the port file")
        url = f"ws://127.0.0.1:{port_file.read_text()}"
        person = WebSocketHost(url, PERSON.token)
        error = person.error("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        assert error["data"] == {"reason": "PERSON_CREDENTIAL"}
        assert error["message"].startswith("PERSON_CREDENTIAL: the connection's credential")
        person.close()
        agent = WebSocketHost(url, AGENT.token)
        assert agent.initialize()["methods"]
        agent.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_agents_approval_over_mcp_says_the_person_decides_and_where(up_like):
    async def main() -> tuple[Any, Any, dict[str, str]]:
        gateway = AsyncClient(up_like.address, AGENT.token)
        try:
            async with Client(mcp_server.build(gateway), mode="legacy") as host:
                tools = {t.name: t.description or "" for t in (await host.list_tools()).tools}
                saved = await host.call_tool("memory_insert", {"content": STATEMENT})
                source = saved.structured_content or {}
                approved = await host.call_tool(
                    "memory_pending_approve",
                    {"source_id": source["source_id"], "expected_revision": source["revision"]},
                )
                return source, approved, tools
        finally:
            await gateway.close()

    source, approved, tools = asyncio.run(asyncio.wait_for(main(), 60))
    assert source["status"] == "pending_review"
    said = "".join(getattr(c, "text", "") for c in approved.content)
    assert approved.is_error and said.startswith("MISSING_SCOPE: ")
    assert "the person's decision, not an agent's" in said
    assert (
        "agentmem console's inbox" in said
        and "`agentmem memories review SOURCE_ID approve`" in said
    )
    assert STATEMENT not in said and AGENT.token not in said
    for name in ("memory_pending_approve", "memory_pending_reject", "memory_thread_mode_set",
                 "memory_source_classify", "memory_fact_retract"):  # fmt: skip
        assert "The person's decision, not an agent's" in tools[name], name
    assert "The person's decision" not in tools["memory_search"]


def test_an_mcp_server_started_before_the_gateway_refuses_a_persons_credential_at_first_use(
    up_like,
):
    """The start-up check could not be made: the first tool call makes it."""

    async def main() -> str:
        gateway = AsyncClient(up_like.address, PERSON.token)
        try:
            async with Client(mcp_server.build(gateway), mode="legacy") as host:
                result = await host.call_tool("memory_search", {"query": "guitar"})
                return "".join(getattr(c, "text", "") for c in result.content)
        finally:
            await gateway.close()

    said = asyncio.run(asyncio.wait_for(main(), 60))
    assert said.startswith("PERSON_CREDENTIAL: the MCP server's credential is a person's")


def test_an_agents_approval_over_the_bridge_says_the_person_decides_and_where(up_like, tmp_path):
    host = StdioHost(up_like.address, AGENT.token, tmp_path, allow_person=False)
    try:
        host.initialize()
        saved = host.call("memory/insert", {"content": STATEMENT})["result"]
        error = host.error(
            "memory/review/approve", {"sourceId": saved["sourceId"], "expectedRevision": 1}
        )
        assert error["data"] == {"reason": "MISSING_SCOPE", "scope": "memory.review",
                                 "decidedBy": "person"}  # fmt: skip
        assert "`agentmem memories review SOURCE_ID approve`" in error["message"]
    finally:
        host.close()
    assert AGENT.token not in host.stderr and STATEMENT not in host.stderr
