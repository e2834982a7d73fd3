"""The MCP server over streamable HTTP, sent two calls with the same JSON-RPC id on one
session while the first is still running: the second is answered at once with an error
naming that id, the first gets its own answer, and the session goes on working."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx2

from tests.faults.conftest import write_lock
from tests.harness import ADMIN_A
from tests.test_mcp import http_mcp  # noqa: F401  (fixture)

PROTOCOL = "2025-06-18"


def answers(body: str) -> list[dict]:
    """The JSON-RPC messages of a response: a JSON body, or the data lines of an SSE one."""
    body = body.strip()
    if body.startswith("{"):
        return [json.loads(body)]
    return [
        json.loads(line[len("data:") :])
        for line in body.splitlines()
        if line.startswith("data:") and line[len("data:") :].strip()
    ]


async def open_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "duplicate-ids-test", "version": "1"},
        },
    }
    r = await http.post(url, json=init)
    assert r.status_code == 200, r.text
    headers = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
    r = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert r.status_code == 202, r.text
    return headers


def insert_call(request_id: object, content: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "memory_insert",
            "arguments": {"content": content, "save_intent": "explicit_user_request"},
        },
    }


def test_a_second_call_with_an_id_in_flight_is_answered_with_an_error(stack, http_mcp):  # noqa: F811
    async def main() -> None:
        auth = {
            "Authorization": f"Bearer {ADMIN_A.token}",
            "Accept": "application/json, text/event-stream",
        }
        async with httpx2.AsyncClient(headers=auth, timeout=60) as http:
            session = await open_session(http, http_mcp)
            with contextlib.ExitStack() as held:
                held.enter_context(write_lock(stack.settings.storage.url))
                async with http.stream(
                    "POST", http_mcp, json=insert_call(7, "the first call"), headers=session
                ) as first:
                    assert first.status_code == 200  # headers are in: the call is running
                    second = await asyncio.wait_for(
                        http.post(http_mcp, json=insert_call(7, "same id"), headers=session), 10
                    )
                    # "7" and 7 are one request to the server's transport: refused too.
                    third = await asyncio.wait_for(
                        http.post(http_mcp, json=insert_call("7", "same id"), headers=session),
                        10,
                    )
                    for dup in (second, third):
                        [reply] = answers(dup.text)
                        assert reply["id"] == json.loads(dup.request.content)["id"]
                        assert reply["error"]["code"] == -32600
                        assert "same id" not in json.dumps(reply)
                    held.close()  # the insert goes on, and the first call gets its answer
                    [reply] = answers((await first.aread()).decode())
                    assert reply["id"] == 7 and ("result" in reply or "error" in reply)
            async with http.stream(
                "POST", http_mcp, json=insert_call(8, "after"), headers=session
            ) as later:
                body = await later.aread()
            [reply] = answers(body.decode())
            assert reply["id"] == 8 and "result" in reply
            # The id is free again once its call is answered.
            r = await http.post(http_mcp, json=insert_call(7, "id reused"), headers=session)
            [reply] = answers(r.text)
            assert reply["id"] == 7 and "result" in reply

    asyncio.run(asyncio.wait_for(main(), 120))
