"""MCP tool arguments no request can carry (a number past the range its field's proto type
holds, a time outside years 1-9999 in UTC): a tool error with the catalog's INVALID_FIELD
naming the argument, never "Error executing tool" and a traceback in the log; nothing
stored. The official MCP client library plays the host, in process."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from agentmem.client import AsyncClient
from agentmem.mcp import server as mcp_server
from tests.harness import ADMIN_A
from tests.test_appends import start
from tests.test_mcp import text

INT64_PAST, INT32_PAST = 2**63, 2**31


def call(stack, tool: str, args: dict[str, Any]) -> types.CallToolResult:
    async def main() -> types.CallToolResult:
        gateway = AsyncClient(stack.address, ADMIN_A.token)
        try:
            async with Client(mcp_server.build(gateway, allow_person=True), mode="legacy") as host:
                return await host.call_tool(tool, args)
        finally:
            await gateway.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


TURN = {"role": "user", "content": "hi"}
# (tool, arguments, the argument at fault)
CASES = [
    ("memory_source_classify", {"classification": "cold", "expected_revision": INT64_PAST}),
    ("memory_pending_approve", {"expected_revision": -(2**63) - 1}),
    ("memory_pending_reject", {"expected_revision": 2**64}),
    ("memory_append", {"messages": [TURN], "expected_revision": INT64_PAST}),
    ("memory_thread_mode_set", {"thread_id": "t1", "mode": "disabled", "expected_revision": 2**70}),
    ("memory_ask", {"question": "where do I live", "token_budget": INT32_PAST}),
    ("memory_sources_list", {"page_size": INT32_PAST}),
    ("memory_pending_list", {"page_size": -(2**31) - 1}),
    ("memory_ask", {"question": "where do I live", "as_of": "0001-01-01T00:00:00+01:00"}),
]
WITH_SOURCE = {"memory_source_classify", "memory_pending_approve", "memory_pending_reject"}


@pytest.mark.parametrize(("tool", "args"), CASES, ids=[f"{t} {list(a)[-1]}" for t, a in CASES])
def test_an_argument_no_request_can_carry_is_invalid_field_naming_it(stack, caplog, tool, args):
    sid = start(stack.client()).source_id
    if tool in WITH_SOURCE | {"memory_append"}:
        args = {"source_id": sid, **args}
    with caplog.at_level(logging.WARNING):
        result = call(stack, tool, args)
    said = text(result)
    assert result.is_error and said.startswith("INVALID_FIELD:"), said
    assert list(args)[-1] in said and "Error executing tool" not in said
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert stack.sql("SELECT count(*) FROM audit_receipts") == [(1,)]  # the conversation's
