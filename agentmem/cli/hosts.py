"""`agentmem doctor --hosts`: is agentmem set up in the MCP hosts this machine has, and does
it work there? A host shows a server as "enabled" even when its command cannot start (then
it simply has no tools); this starts the configured command as the host would and says.

For each host it knows (Codex, Claude Code, opencode, Gemini CLI), user-wide and in the
current project: whether agentmem is configured, whether its command resolves, whether
the credential in its environment is accepted, and whether the server lists its tools.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem.client.settings import DEFAULT_ADDRESS, ENV_ADDRESS, ENV_TOKEN

NAME = "agentmem"  # the server's name in a host's configuration
PROTOCOL_VERSION = "2025-06-18"


@dataclass
class Server:
    """agentmem as one host's file configures it."""

    host: str
    path: Path
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def _read_toml(path: Path) -> Any:
    return tomllib.loads(path.read_text()) if path.is_file() else None


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _codex(entry: dict[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    return (
        str(entry.get("command", "")),
        list(map(str, entry.get("args", []))),
        _strings(entry.get("env")),
    )


def _opencode(entry: dict[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    command = entry.get("command") or []  # opencode: the command and its arguments, one list
    command = [command] if isinstance(command, str) else list(map(str, command))
    return (command[0] if command else ""), command[1:], _strings(entry.get("environment"))


# host: (where agentmem may sit: each file, user-wide then the project's, with the keys down
# to its entry; how to read the file; how the entry names command, arguments, environment)
Reader = Callable[[Path], Any]
Entry = Callable[[dict[str, Any]], tuple[str, list[str], dict[str, str]]]
Places = list[tuple[Path, tuple[str, ...]]]


def _hosts(home: Path, config: Path, project: Path) -> list[tuple[str, Places, Reader, Entry]]:
    codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    servers = ("mcpServers", NAME)
    return [
        (
            "Codex",
            [
                (codex_home / "config.toml", ("mcp_servers", NAME)),
                (project / ".codex" / "config.toml", ("mcp_servers", NAME)),
            ],
            _read_toml,
            _codex,
        ),
        (
            "Claude Code",
            [
                (home / ".claude.json", servers),  # claude mcp add --scope user
                (home / ".claude.json", ("projects", str(project), *servers)),  # --scope local
                (project / ".mcp.json", servers),  # --scope project
            ],
            _read_json,
            _codex,
        ),
        (
            "opencode",
            [
                (config / "opencode" / "opencode.json", ("mcp", NAME)),
                (project / "opencode.json", ("mcp", NAME)),
            ],
            _read_json,
            _opencode,
        ),
        (
            "Gemini CLI",
            [
                (home / ".gemini" / "settings.json", servers),
                (project / ".gemini" / "settings.json", servers),
            ],
            _read_json,
            _codex,
        ),
    ]


def _shown(path: Path, home: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def resolve(command: str, env: dict[str, str]) -> str | None:
    """The executable the host would start: a path that exists and is executable, or the
    name found on the host's PATH (its env's PATH when it sets one)."""
    if os.sep in command:
        return command if os.path.isfile(command) and os.access(command, os.X_OK) else None
    return shutil.which(command, path=env.get("PATH", os.environ.get("PATH", os.defpath)))


def _expand(env: dict[str, str]) -> dict[str, str]:
    """Hosts expand `${VAR}` / `$VAR` in env values from their own environment."""
    return {k: os.path.expandvars(v) for k, v in env.items()}


def list_tools(argv: list[str], env: dict[str, str], timeout: float) -> list[str]:
    """Starts the server as a host does (stdio, newline-delimited JSON-RPC) and returns the
    names of its tools; raises RuntimeError with what went wrong."""
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    lines: queue.Queue[str | None] = queue.Queue()
    err: list[str] = []

    def pump() -> None:
        assert proc.stdout
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    threading.Thread(target=lambda: err.extend(proc.stderr or []), daemon=True).start()

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise RuntimeError(f"no answer within {timeout:g} s") from None
            if line is None:
                proc.wait(timeout=5)
                said = (err[-1].strip() if err else "") or f"exit code {proc.returncode}"
                raise RuntimeError(f"it stopped: {said.removeprefix('agentmem: ')}")
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(message, dict) and message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"it answered {message['error'].get('message')}")
                result: dict[str, Any] = message.get("result") or {}
                return result

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "agentmem-doctor", "version": "1"},
                },
            }
        )
        answer(1)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        return [str(t.get("name")) for t in answer(2).get("tools", [])]
    except (BrokenPipeError, OSError) as e:
        raise RuntimeError(f"it could not be talked to ({e})") from None
    finally:
        proc.kill()
        proc.wait()


def _credential(address: str, token: str) -> tuple[bool, str]:
    from agentmem.client import NO_RETRY, Client
    from agentmem.client.errors import ApiError, Unauthenticated, Unavailable

    try:
        with Client(address, token, retry=NO_RETRY) as client:
            client.get_capabilities(timeout=10)
    except Unauthenticated:
        return False, f"the gateway at {address} does not accept its {ENV_TOKEN}"
    except Unavailable:
        return False, f"no gateway answers at {address} (its {ENV_ADDRESS})"
    except ApiError as e:
        return False, f"the gateway at {address} answered {e.explain()}"
    return True, f"its {ENV_TOKEN} is accepted by the gateway at {address}"


def check(server: Server, timeout: float, say: Callable[[bool | None, str], None]) -> None:
    env = _expand(server.env)
    if not server.command:  # a remote entry (url / httpUrl): nothing here to start
        say(None, "agentmem is configured over HTTP: not checked (only stdio entries are)")
        return
    say(True, f"agentmem is configured: {' '.join([server.command, *server.args])}")
    found = resolve(server.command, env)
    if found:
        say(True, f"the command resolves: {found}")
    else:
        beside = Path(sys.executable).parent / NAME  # this installation's own script
        mine = shutil.which(NAME) or (str(beside) if resolve(str(beside), {}) else None)
        fix = f"; give its absolute path, e.g. command = {mine!r}" if mine else ""
        where = (
            "does not exist or is not executable"
            if os.sep in server.command
            else ("is not on the host's PATH")
        )
        say(
            False,
            f"the command {server.command!r} {where}: the host starts nothing and "
            f"shows no tools{fix}",
        )
    token = env.get(ENV_TOKEN) or os.environ.get(ENV_TOKEN, "")
    address = env.get(ENV_ADDRESS) or os.environ.get(ENV_ADDRESS) or DEFAULT_ADDRESS
    if not token:
        say(False, f"no {ENV_TOKEN} in its env: the server refuses to start without one")
    elif ENV_TOKEN not in env:  # some hosts (Codex) pass on only a few of their variables
        say(
            None,
            f"{ENV_TOKEN} is not in its env, only in this shell's: put it in the "
            "server's env unless the host passes its environment on",
        )
        say(*_credential(address, token))
    else:
        say(*_credential(address, token))
    if not found:
        return
    run_env = {**os.environ, **env}
    try:
        tools = list_tools([found, *server.args], run_env, timeout)
    except RuntimeError as e:
        say(False, f"the MCP server did not list its tools: {e}")
        return
    say(
        bool(tools),
        f"the MCP server lists {len(tools)} tools" if tools else ("the MCP server lists no tools"),
    )


def find(
    home: Path, config: Path, project: Path
) -> tuple[list[Server], list[tuple[str, list[Path]]], list[str]]:
    """The agentmem entries found; the hosts without one (with the files looked at); and
    files that could not be read."""
    servers: list[Server] = []
    absent: list[tuple[str, list[Path]]] = []
    unreadable: list[str] = []
    for host, places, read, entry in _hosts(home, config, project):
        found = False
        seen: set[tuple[Path, tuple[str, ...]]] = set()
        for path, keys in places:
            if (path, keys) in seen:  # the project may be the home folder
                continue
            seen.add((path, keys))
            try:
                data = read(path)
            except (OSError, ValueError) as e:
                unreadable.append(f"{host}: {_shown(path, home)} cannot be read ({e})")
                continue
            for key in keys:
                data = data.get(key) if isinstance(data, dict) else None
            if isinstance(data, dict):
                command, args, env = entry(data)
                servers.append(Server(host, path, command, args, env))
                found = True
        if not found:
            absent.append((host, list(dict.fromkeys(p for p, _ in places))))
    return servers, absent, unreadable


def doctor_hosts(args: argparse.Namespace) -> int:
    home = Path(os.environ.get("HOME") or Path.home())
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    servers, absent, unreadable = find(home, config, Path.cwd())
    broken = 0
    for server in servers:
        print(f"{server.host} ({_shown(server.path, home)})")
        problems = 0

        def say(ok: bool | None, text: str) -> None:
            nonlocal problems
            problems += ok is False
            prefix = {True: "ok", False: "PROBLEM", None: "note"}[ok]
            print(f"  {prefix:<8}{text}", flush=True)

        check(server, args.timeout, say)
        broken += problems > 0
    for host, paths in absent:
        looked = ", ".join(_shown(p, home) for p in dict.fromkeys(paths))
        print(f"{host}: agentmem is not configured ({looked})")
    for line in unreadable:
        print(f"PROBLEM {line}")
    if broken:
        print(f"{broken} host configuration(s) have a problem (docs/mcp.md says how to set each)")
    return 1 if broken or unreadable else 0
