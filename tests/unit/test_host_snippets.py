"""Every MCP host snippet in README.md and docs/ has the shape its host's own CLI or config
file accepts: a `claude mcp add` command as Claude Code parses it, a Codex TOML table, an
opencode JSON object. (Running the hosts themselves is CI's real-hosts job.)"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
INLINE = re.compile(r"`(claude mcp add[^`]*)`")

# `claude mcp add`'s options (Claude Code 2.x): those that take one value, and the variadic
# ones, which take every following argument up to the next option or `--`: an `--env`
# right before the server's name swallows the name ("Invalid environment variable format").
ONE_VALUE = {"--transport", "-t", "--scope", "-s", "--callback-port", "--client-id"}
VARIADIC = {"--env": r"[A-Z_][A-Z0-9_]*=.*", "-e": r"[A-Z_][A-Z0-9_]*=.*"}
VARIADIC |= {"--header": r"[A-Za-z-]+: .+", "-H": r"[A-Za-z-]+: .+"}


def blocks(lang: str) -> list[tuple[str, str]]:
    return [
        (page.name, body)
        for page in PAGES
        for found_lang, body in FENCE.findall(page.read_text())
        if found_lang == lang
    ]


def claude_commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for _, body in FENCE.findall(text):
            joined = body.replace("\\\n", " ")
            found += [(page.name, line) for line in joined.splitlines() if "claude mcp add" in line]
        found += [(page.name, cmd) for cmd in INLINE.findall(text)]
    return found


def parse_claude_mcp_add(command: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(positional arguments, option values, the command after `--`) as Claude Code's
    parser reads `claude mcp add …`."""
    words = shlex.split(command)
    assert words[:3] == ["claude", "mcp", "add"], command
    words = words[3:]
    after: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, after = words[:at], words[at + 1 :]
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w in ONE_VALUE:
            options.setdefault(w, []).append(words[i + 1])
            i += 2
        elif w in VARIADIC:
            i += 1
            while i < len(words) and not words[i].startswith("-"):
                options.setdefault(w, []).append(words[i])
                i += 1
        else:
            assert not w.startswith("-"), f"unknown option {w} in {command}"
            positional.append(w)
            i += 1
    return positional, options, after


def test_the_pages_have_snippets_for_each_host():
    assert claude_commands() and blocks("toml") and blocks("json")


@pytest.mark.parametrize(("page", "command"), claude_commands())
def test_claude_code_commands_parse_as_claude_code_parses_them(page, command):
    positional, options, after = parse_claude_mcp_add(command)
    transport = options.get("--transport", options.get("-t", ["stdio"]))[0]
    assert positional[:1] == ["agentmem"], f"{page}: the server's name is swallowed: {command}"
    for name, pattern in VARIADIC.items():
        for value in options.get(name, []):
            assert re.fullmatch(pattern, value), f"{page}: bad {name} value {value!r}"
    if transport == "stdio":
        assert positional == ["agentmem"] and after[-1:] == ["mcp"], f"{page}: {command}"
    else:
        assert len(positional) == 2 and positional[1].startswith("http"), f"{page}: {command}"
        assert not after


@pytest.mark.parametrize(("page", "body"), [b for b in blocks("toml") if "mcp_servers" in b[1]])
def test_codex_tables_are_valid_toml_of_a_server(page, body):
    server = tomllib.loads(body)["mcp_servers"]["agentmem"]
    assert isinstance(server["command"], str) and isinstance(server["args"], list), page
    assert set(server["env"]) == {"AGENTMEM_ADDR", "AGENTMEM_TOKEN"}, page


@pytest.mark.parametrize(
    ("page", "body"), [b for b in blocks("json") if '"mcp": {' in b[1] or '"mcp":{' in b[1]]
)
def test_opencode_objects_are_valid_json_of_a_server(page, body):
    server = json.loads(body)["mcp"]["agentmem"]
    assert server["type"] == "local" and isinstance(server["command"], list), page
    assert set(server["environment"]) == {"AGENTMEM_ADDR", "AGENTMEM_TOKEN"}, page
