"""The host pages list what is served: every MCP tool in docs/mcp.md, every app-server
method and notification in docs/app-server.md, and nothing that is not served."""

from __future__ import annotations

import asyncio
import re

from agentmem import mcp_server
from agentmem.app_server.handshake import EVENTS_STOPPED
from agentmem.app_server.methods import METHODS, NOTIFICATIONS
from agentmem.client import AsyncClient
from tests.harness import ROOT

DOCS = ROOT / "docs"


def served_tools() -> set[str]:
    async def listed() -> set[str]:
        client = AsyncClient("127.0.0.1:1", "unused")
        try:
            server = mcp_server.build(client)
            return {t.name for t in await server.list_tools()}
        finally:
            await client.close()

    return asyncio.run(listed())


def test_docs_mcp_lists_every_served_tool_and_no_other():
    named = set(re.findall(r"`(memory_[a-z_]+)`", (DOCS / "mcp.md").read_text()))
    tools = served_tools()
    assert len(tools) >= 14
    assert named == tools


def test_docs_app_server_lists_every_method_and_notification_and_no_other():
    page = (DOCS / "app-server.md").read_text()
    tables = "\n".join(line for line in page.splitlines() if line.startswith("| `"))
    in_tables = set(re.findall(r"`((?:memory|thread)/[A-Za-z/]+)`", tables))
    served = set(METHODS) | set(NOTIFICATIONS) | {EVENTS_STOPPED}
    assert in_tables == served
