"""`agentmem doctor --hosts` against real servers: each host's configuration file, in a
temporary home and project, good or broken the ways hosts break."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentmem.cli.main import main
from tests.harness import KEYS, ROOT, Key

AGENTMEM = str(Path(sys.executable).parent / "agentmem")


# Hosts act with an agent's credential (a person's is refused by `agentmem mcp`).
AGENT = Key("tok-host-agent", "host-agent", "tenant-a", ("memory.read", "memory.write"), "agent")


@pytest.fixture
def stack(make_stack):
    return make_stack(auth__api_keys=[k.config() for k in (*KEYS, AGENT)])


@pytest.fixture
def doctor(tmp_path, monkeypatch, capsys):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("AGENTMEM_TOKEN", raising=False)
    monkeypatch.chdir(project)

    def run() -> tuple[int, str]:
        with pytest.raises(SystemExit) as e:
            main(["doctor", "--hosts", "--timeout", "90"])
        return int(e.value.code or 0), capsys.readouterr().out

    run.home, run.project = home, project  # type: ignore[attr-defined]
    return run


def _env(stack, token: str = AGENT.token) -> dict[str, str]:
    return {"AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": token, "PYTHONPATH": str(ROOT)}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _codex(path: Path, command: str, env: dict[str, str]) -> None:
    pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    _write(
        path,
        f'[mcp_servers.agentmem]\ncommand = "{command}"\nargs = ["mcp"]\nenv = {{ {pairs} }}\n',
    )


def _claude_or_gemini(path: Path, command: str, env: dict[str, str]) -> None:
    entry = {"command": command, "args": ["mcp"], "env": env}
    _write(path, json.dumps({"mcpServers": {"agentmem": entry, "other": {"command": "x"}}}))


def test_nothing_configured_is_said_and_is_no_failure(doctor):
    code, out = doctor()
    assert code == 0, out
    for host in ("Codex", "Claude Code", "opencode", "Gemini CLI"):
        assert f"{host}: agentmem is not configured" in out


def test_an_http_entry_is_said_and_not_started(doctor):
    remote = {"mcpServers": {"agentmem": {"httpUrl": "http://127.0.0.1:8765/mcp"}}}
    _write(doctor.project / ".gemini" / "settings.json", json.dumps(remote))
    code, out = doctor()
    assert code == 0, out
    assert "note    agentmem is configured over HTTP: not checked" in out, out


def test_each_hosts_good_configuration_lists_the_tools(stack, doctor):
    env = _env(stack)
    _codex(doctor.home / ".codex" / "config.toml", AGENTMEM, env)
    _claude_or_gemini(doctor.project / ".mcp.json", AGENTMEM, env)
    _claude_or_gemini(doctor.home / ".gemini" / "settings.json", AGENTMEM, env)
    opencode = {
        "mcp": {"agentmem": {"type": "local", "command": [AGENTMEM, "mcp"], "environment": env}}
    }
    _write(doctor.project / "opencode.json", json.dumps(opencode))
    code, out = doctor()
    assert code == 0, out
    assert "PROBLEM" not in out
    for heading in (
        "Codex (~/.codex/config.toml)",
        "Claude Code (",
        "opencode (",
        "Gemini CLI (~/.gemini/settings.json)",
    ):
        assert heading in out, out
    assert out.count(f"is accepted by the gateway at {stack.address}") == 4, out
    assert out.count("the MCP server lists ") == 4, out
    assert "lists 0 tools" not in out


def test_a_command_not_on_the_hosts_path_is_a_problem(stack, doctor):
    empty = doctor.project / "empty-bin"
    empty.mkdir()
    _codex(
        doctor.project / ".codex" / "config.toml", "agentmem", {**_env(stack), "PATH": str(empty)}
    )
    code, out = doctor()
    assert code == 1, out
    assert "PROBLEM the command 'agentmem' is not on the host's PATH" in out, out
    assert "give its absolute path" in out
    assert "is accepted by the gateway" in out  # the credential itself is fine
    assert "lists" not in out  # nothing to start


def test_a_credential_the_gateway_refuses_is_a_problem(stack, doctor):
    # As `claude mcp add` writes it by default (--scope local): under the project's path.
    entry = {"command": AGENTMEM, "args": ["mcp"], "env": _env(stack, token="tok-wrong")}
    project = {"projects": {str(doctor.project): {"mcpServers": {"agentmem": entry}}}}
    _write(doctor.home / ".claude.json", json.dumps(project))
    code, out = doctor()
    assert code == 1, out
    assert f"PROBLEM the gateway at {stack.address} does not accept its AGENTMEM_TOKEN" in out
    assert "PROBLEM the MCP server did not list its tools: it stopped" in out, out
    assert "the command resolves" in out
