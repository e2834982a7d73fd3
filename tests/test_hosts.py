"""The real hosts against real servers (`make hosts` installs them, pinned, into .hosts):
Codex's own app-server schemas validate the bridge's answers, and the MCP Inspector CLI and
the official TypeScript SDK use `agentmem mcp` over stdio and Streamable HTTP. Skipped
unless AGENTMEM_HOSTS names the folder the hosts are installed in."""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentmem.client import person_credential
from agentmem.mcp import confirm as mcp_confirm
from tests.app_server_support import CLIENT_INFO, StdioHost
from tests.harness import ADMIN_A, ROOT, free_port, wait_until

HOSTS = Path(os.environ.get("AGENTMEM_HOSTS", ROOT / ".hosts")).resolve()
BIN = HOSTS / "node_modules" / ".bin"
pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("AGENTMEM_HOSTS") or not (BIN / "codex").exists(),
        reason="the real hosts are not installed: make hosts",
    ),
    pytest.mark.timeout(300),
]
MCP = [sys.executable, "-m", "agentmem.cli.main", "mcp"]


def run(
    *command: str | Path,
    env: dict[str, str] | None = None,
    timeout: float = 180,
    ok: tuple[int, ...] = (0,),
) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    assert done.returncode in ok, (command, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


# --- Codex's schemas --------------------------------------------------------------------


@functools.cache
def codex_schemas(tmp: Path) -> Path:
    out = tmp / "codex-schemas"
    run(BIN / "codex", "app-server", "generate-json-schema", "--experimental", "--out", out,
        env={"CODEX_HOME": str(tmp / "codex-home")})  # fmt: skip
    return out


def validator(schemas: Path, name: str) -> jsonschema.Draft7Validator:
    for folder in ("", "v1", "v2"):
        path = schemas / folder / f"{name}.json"
        if path.exists():
            return jsonschema.Draft7Validator(json.loads(path.read_text()))
    raise LookupError(name)


def test_codexs_schemas_validate_the_bridges_answers_to_the_shared_methods(stack, tmp_path):
    (tmp_path / "codex-home").mkdir()
    schemas = codex_schemas(tmp_path)
    message = validator(schemas, "JSONRPCMessage")
    host = StdioHost(stack.address, ADMIN_A.token, tmp_path)
    try:
        seen: list[dict[str, Any]] = []

        def answer(method: str, params: Any, result: str | None) -> dict[str, Any]:
            response = host.call(method, params)
            seen.append(response)
            if result is not None:
                assert "result" in response, (method, response)
                validator(schemas, result).validate(response["result"])
            return response

        opened = answer(
            "initialize",
            {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}},
            "InitializeResponse",
        )
        assert opened["result"]["codexHome"]
        host.send({"method": "initialized"})
        answer("thread/memoryMode/set", {"threadId": "cx", "mode": "disabled"},
               "ThreadMemoryModeSetResponse")  # fmt: skip
        answer("thread/memoryMode/set", {"threadId": "cx", "mode": "enabled"},
               "ThreadMemoryModeSetResponse")  # fmt: skip
        answer("thread/memory/read", {"threadId": "cx"}, "ThreadMemoryReadResponse")
        answer("memory/status", {"minConsolidatedThreads": 20}, "MemoryStatusResponse")
        answer("memory/status", None, "MemoryStatusResponse")
        reset = answer("memory/reset", None, None)
        assert reset["error"]["data"]["reason"] == "MEMORY_RESET_REFUSED"
        for refused in (
            answer("memory/status", {"minConsolidatedThreads": 0}, None),
            answer("no/such/method", {}, None),
            answer("thread/memoryMode/set", {"threadId": 5, "mode": "enabled"}, None),
            answer("thread/memory/read", {"threadId": "\ud800"}, None),
        ):
            validator(schemas, "JSONRPCError").validate(refused)
        host.write("{not json")  # Codex's own server answers nothing: nor does the bridge
        host.write('{"id": true, "method": "memory/status"}')
        answer("memory/status", None, "MemoryStatusResponse")
        notification = host.notification("thread/memoryMode/updated")
        seen.append({"method": "thread/memoryMode/updated", "params": notification})
        for each in seen:
            message.validate(each)
    finally:
        host.close()
    assert "Traceback" not in host.stderr


def test_codexs_elicitation_parser_accepts_the_save_prompts_form(tmp_path):
    """What Codex parses a form's `requestedSchema` as (`McpElicitationSchema`: no other
    keys, primitive properties only)."""
    (tmp_path / "codex-home").mkdir()
    document = json.loads(
        (codex_schemas(tmp_path) / "McpServerElicitationRequestParams.json").read_text()
    )
    definitions = document["definitions"]
    schema = {**definitions["McpElicitationSchema"], "definitions": definitions}
    jsonschema.Draft7Validator(schema).validate(mcp_confirm.REQUESTED_SCHEMA)


def _accepting(proc: subprocess.Popen[bytes], port: int) -> bool:
    assert proc.poll() is None
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


# --- MCP hosts ---------------------------------------------------------------------------


@pytest.fixture
def http_mcp(stack) -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "AGENTMEM_TOKEN"}
    env["AGENTMEM_ADDR"] = stack.address
    proc = subprocess.Popen(  # these tests act as the person, on purpose
        [*MCP, "--transport", "http", "--port", str(port), "--allow-person-credential"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    wait_until(lambda: _accepting(proc, port), 30, "the MCP server accepting connections")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=30)


def stdio_env(stack) -> dict[str, str]:
    """The person's credential, allowed on purpose: these tests call every tool."""
    return {"AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token,
            person_credential.ENV: "1"}  # fmt: skip


def check_sdk_report(report: dict[str, Any]) -> None:
    assert len(report["tools"]) >= 14
    limit = report["tools"]["memory_search"]["input"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 100)
    for name, tool in report["tools"].items():
        assert tool["output"] and tool["output"]["type"] == "object", name
    calls = report["calls"]
    assert calls["memory_insert"]["structured"]["status"] == "active"
    assert calls["memory_search"]["structured"]["hits"]
    assert calls["memory_thread_mode_set"]["structured"]["mode"] == "disabled"
    missing = calls["memory_pending_approve"]
    assert missing["isError"] and missing["text"].startswith("NOT_FOUND")
    out_of_range = calls["memory_search_limit"]
    assert out_of_range["isError"] and out_of_range["text"].startswith("INVALID_FIELD")
    assert report["errors"]["unknownTool"] == -32602


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_lists_and_calls_the_tools(stack, request, transport):
    script = ROOT / "tests" / "hosts" / "sdk_client.mjs"
    env = {"AGENTMEM_HOSTS": str(HOSTS)}
    if transport == "stdio":
        out = run("node", script, "stdio", *MCP, env={**env, **stdio_env(stack)})
    else:
        url = request.getfixturevalue("http_mcp")
        out = run("node", script, "http", url, ADMIN_A.token, env=env)
    check_sdk_report(json.loads(out.strip().splitlines()[-1]))


TOOL_IS_ERROR = 5  # the Inspector's exit status for a tool result with isError


def inspector(target: tuple[list[str], list[str]], *args: str, ok: int = 0) -> Any:
    """The Inspector's CLI: `target` is what goes before the method's options and what
    goes after them; its answer is the JSON document its output starts with."""
    options, server = target
    out = run(BIN / "mcp-inspector", "--cli", *options, *args, *server, ok=(ok,))
    return json.JSONDecoder().raw_decode(out.strip())[0]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_mcp_inspector_cli_in_strict_mode(stack, request, transport):
    if transport == "stdio":
        extra = [part for k, v in stdio_env(stack).items() for part in ("-e", f"{k}={v}")]
        target = (extra, ["--", *MCP])
    else:
        url = request.getfixturevalue("http_mcp")
        bearer = f"Authorization: Bearer {ADMIN_A.token}"
        target = ([url, "--transport", "http"], ["--header", bearer])  # --header takes the rest
    listed = inspector(target, "--method", "tools/list", "--strict")
    tools = {t["name"]: t for t in listed["tools"]}
    assert len(tools) >= 14 and all(t.get("outputSchema") for t in tools.values())
    called = inspector(
        target, "--method", "tools/call", "--tool-name", "memory_thread_mode_get",
        "--tool-arg", "thread_id=inspector",
    )  # fmt: skip
    assert called["structuredContent"]["thread_id"] == "inspector"
    assert called.get("isError") in (None, False)
    refused = inspector(
        target, "--method", "tools/call", "--tool-name", "memory_pending_approve",
        "--tool-arg", "source_id=src_missing", "--tool-arg", "expected_revision=1",
        ok=TOOL_IS_ERROR,
    )  # fmt: skip
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith("NOT_FOUND")


# --- Codex as the MCP host ---------------------------------------------------------------


class CodexAppServer:
    """`codex app-server` on stdio, configured with `agentmem mcp` as an MCP server; the
    test plays Codex's user interface (and so its user)."""

    def __init__(self, home: Path, address: str, token: str, url: str | None = None) -> None:
        """`agentmem mcp` on stdio, or (`url`) the one serving Streamable HTTP there."""
        home.mkdir(exist_ok=True)
        args = ", ".join(json.dumps(a) for a in MCP[1:])
        server = (
            f'url = {json.dumps(url)}\nbearer_token_env_var = "AGENTMEM_TOKEN"\n'
            if url
            else f"command = {json.dumps(MCP[0])}\nargs = [{args}]\n"
            f"cwd = {json.dumps(str(ROOT))}\n"
            "[mcp_servers.agentmem.env]\n"
            f"AGENTMEM_ADDR = {json.dumps(address)}\n"
            f"AGENTMEM_TOKEN = {json.dumps(token)}\n"
        )
        (home / "config.toml").write_text(
            "[mcp_servers.agentmem]\nstartup_timeout_sec = 60\ntool_timeout_sec = 120\n" + server
        )
        self.proc = subprocess.Popen(
            [str(BIN / "codex"), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "CODEX_HOME": str(home), "AGENTMEM_TOKEN": token},
            cwd=home,
            text=True,
        )
        self.ids = iter(range(1, 1000))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Any, on_request: Any = None) -> dict[str, Any]:
        """The response to one request; requests from Codex on the way go to `on_request`."""
        request_id = next(self.ids)
        self.send({"id": request_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request from Codex
                result = on_request(message) if on_request else None
                self.send({"id": message["id"], "result": result})
        raise EOFError("codex app-server ended")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.mark.parametrize(
    ("transport", "answer", "stored"),
    [("stdio", {"action": "accept", "content": {"save": True}}, True),
     ("stdio", {"action": "decline", "content": None}, False),
     ("stdio", {"action": "cancel", "content": None}, False),
     ("http", {"action": "accept", "content": {"save": True}}, True),
     ("http", {"action": "decline", "content": None}, False)],
)  # fmt: skip
def test_codex_as_the_mcp_host_forwards_the_save_prompt(
    make_stack, tmp_path, transport, answer, stored
):
    from tests.harness import KEYS
    from tests.test_mcp_elicitation import SERVER_KEY

    server = {**SERVER_KEY.config(), "trusted_save_intents": ["user_confirmed"]}
    stack = make_stack(
        memory__insert_policy="require_save_intent",
        auth__api_keys=[*(k.config() for k in KEYS), server],
    )
    url = None
    if transport == "http":
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "AGENTMEM_TOKEN"}
        mcp = subprocess.Popen(
            [*MCP, "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            env={**env, "AGENTMEM_ADDR": stack.address},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: _accepting(mcp, port), 30, "the MCP server accepting connections")
        url = f"http://127.0.0.1:{port}/mcp"
    codex = CodexAppServer(tmp_path / "codex-home", stack.address, SERVER_KEY.token, url)
    asked: list[dict[str, Any]] = []

    def user(request: dict[str, Any]) -> Any:
        assert request["method"] == "mcpServer/elicitation/request", request
        asked.append(request["params"])
        return answer

    try:
        hello = {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": True}}
        assert "result" in codex.request("initialize", hello)
        codex.send({"method": "initialized"})
        started = codex.request("thread/start", {"cwd": str(tmp_path)})
        assert "result" in started, started
        thread = started["result"]["thread"]["id"]
        listed = codex.request("mcpServerStatus/list", {})
        (agentmem_status,) = [s for s in listed["result"]["data"] if s["name"] == "agentmem"]
        assert len(agentmem_status["tools"]) >= 14 and not agentmem_status.get("toolsError")
        call = {"threadId": thread, "server": "agentmem", "tool": "memory_insert",
                "arguments": {"content": "I play a yellow Squier Tele"}}  # fmt: skip
        done = codex.request("mcpServer/tool/call", call, on_request=user)
    finally:
        codex.close()
        if url:
            mcp.terminate()
            mcp.wait(timeout=30)
    assert "result" in done, done
    assert len(asked) == 1 and asked[0]["mode"] == "form"
    assert asked[0]["requestedSchema"] == mcp_confirm.REQUESTED_SCHEMA
    memories = stack.client().list_memories(status_filter="all").memories
    if stored:
        assert not done["result"].get("isError"), done
        assert [(m.save_intent, m.status) for m in memories] == [("user_confirmed", 1)]
    else:
        assert done["result"]["isError"] is True
        assert memories == []


# --- Gemini CLI: the docs' snippet ---------------------------------------------------------


def gemini_snippet() -> dict[str, Any]:
    """The settings snippet docs/mcp.md gives for Gemini CLI."""
    page = (ROOT / "docs" / "mcp.md").read_text()
    section = page.split("### Gemini CLI", 1)[1]
    snippet: dict[str, Any] = json.loads(section.split("```json", 1)[1].split("```", 1)[0])
    return snippet


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_gemini_cli_reads_the_docs_snippet_and_connects(stack, request, tmp_path, transport):
    settings = gemini_snippet()
    server = settings["mcpServers"]["agentmem"]
    assert server["command"] == "agentmem" and server["args"] == ["mcp"]
    if transport == "stdio":  # the snippet, with this checkout's agentmem and the test stack
        server["command"] = str(Path(sys.executable).parent / "agentmem")
        server["env"] = stdio_env(stack)
    else:
        url = request.getfixturevalue("http_mcp")
        settings["mcpServers"]["agentmem"] = {
            "httpUrl": url,
            "headers": {"Authorization": f"Bearer {ADMIN_A.token}"},
        }
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(home): "TRUST_FOLDER"}))
    done = subprocess.run(
        [str(BIN / "gemini"), "mcp", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=home,
        env={**os.environ, "HOME": str(home)},
    )
    said = done.stdout + done.stderr  # Gemini CLI writes its listing on either
    listed = [line for line in said.splitlines() if "agentmem:" in line]
    assert len(listed) == 1 and "Connected" in listed[0] and "✓" in listed[0], said
