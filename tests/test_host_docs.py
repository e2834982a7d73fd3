"""The host pages list what is served: every MCP tool in docs/mcp.md, every app-server
method and notification in docs/app-server.md, and nothing that is not served; every host
snippet gives hosts the agent's credential, and README's are the MCP page's."""

from __future__ import annotations

import asyncio
import re

from agentmem.app_server.handshake import EVENTS_STOPPED
from agentmem.app_server.methods import METHODS, NOTIFICATIONS
from agentmem.client import AsyncClient
from agentmem.mcp import server as mcp_server
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


HOSTS = {"Claude Code": "sh", "Codex": "toml", "opencode": "json"}


def _first_block(text: str, marker: str, language: str) -> str:
    return text.split(marker, 1)[1].split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_readmes_host_snippets_are_the_mcp_pages():
    readme = (ROOT / "README.md").read_text()
    page = (DOCS / "mcp.md").read_text()
    for host, language in HOSTS.items():
        shown = _first_block(readme, f"**{host}**", language)
        assert shown == _first_block(page, f"### {host}\n", language), host


def test_every_host_snippet_is_given_the_agents_credential():
    """`<token>` is said to be the agent's (`data/agent-token`), never the person's."""
    page = (DOCS / "mcp.md").read_text()
    hosts = page.split("## Configuring hosts", 1)[1].split("## Verified hosts", 1)[0]
    assert "cat data/agent-token" in hosts and "dev-token" not in hosts.replace(
        "(`data/dev-token`)", ""
    )
    readme = (ROOT / "README.md").read_text().split("### MCP:", 1)[1].split("### Codex-style", 1)[0]
    assert "cat data/agent-token" in readme
    assert "dev-token" not in readme
    bridge = (DOCS / "app-server.md").read_text().split("## Starting it", 1)[1]
    assert "AGENTMEM_TOKEN=$(cat data/agent-token) agentmem app-server" in bridge
