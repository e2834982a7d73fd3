"""Real turns in real hosts: opencode, Codex and Claude Code, each configured from the MCP
page's own snippet with the credential it names, run `agentmem mcp` against `agentmem up`
and talk to a scripted model (`tests/scripted_model.py`) that makes the tool calls a model
would. What the server stored is read with the person's credential; what the model was sent
is what the scripted model recorded.

The scenes: a statement in conversation is not saved under `require_save_intent`; under
`review_pending` the model's own approval of what it saved leaves it pending, and the
model is told that the person decides; "remember that …" stores the memory, for the person
to approve; a new session's question gets the memory in the tool result the model reads.

Skipped unless AGENTMEM_HOSTS names the folder `make hosts` installs the hosts in.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentmem.client import NO_RETRY, Client
from tests.harness import ROOT, Process
from tests.scripted_model import Call, Say, ScriptedModel, inserted

HOSTS = Path(os.environ.get("AGENTMEM_HOSTS", ROOT / ".hosts")).resolve()
BIN = HOSTS / "node_modules" / ".bin"
pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("AGENTMEM_HOSTS") or not (BIN / "opencode").exists(),
        reason="the real hosts are not installed: make hosts",
    ),
    pytest.mark.timeout(600),
]

MCP_PAGE = ROOT / "docs" / "mcp.md"
STATEMENT = "I have a yellow Squier Tele with a black pickguard"
REMEMBER = "Remember that my guitar is a yellow Squier Tele with a black pickguard"
GUITAR = "My guitar is a yellow Squier Tele with a black pickguard"
QUESTION = "What guitar do I have?"
SAVE_PROMPT = "Save this memory?"
YES = {"action": "accept", "content": {"save": True}}
NO = {"action": "decline"}


# --- agentmem up, and the credential the docs give hosts --------------------------------


@dataclass
class Up:
    address: str
    data: Path

    def person(self) -> Client:
        """The person's client: the credential for the CLI and the console."""
        token = (self.data / "dev-token").read_text().strip()
        return Client(self.address, token, retry=NO_RETRY)

    def host_credential(self) -> str:
        """What the MCP page says to give hosts (`cat data/…`), as `agentmem up` keeps it."""
        return (self.data / credential_file()).read_text().strip()

    def policy(self, policy: str) -> None:
        with self.person() as person:
            now = person.get_insert_policy()
            person.set_insert_policy(insert_policy=policy, expected_revision=now.revision)

    def memories(self) -> dict[str, Any]:
        with self.person() as person:
            listed = person.list_memories(status_filter="all", page_size=200).memories
            return {m.source_id: m for m in listed}


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    """`agentmem up` as `make run` starts it, its credentials where it keeps them."""
    tmp = tmp_path_factory.mktemp("up")
    data = tmp / "data"
    fresh = {"AGENTMEM_DEV_TOKEN": "", "AGENTMEM_DEV_AGENT_TOKEN": ""}
    proc = Process(["up", "--listen", "127.0.0.1:0", "--data-dir", str(data)], fresh, tmp, "up")
    try:
        yield Up(proc.address, data)
    finally:
        proc.terminate()


def credential_file() -> str:
    """The file the MCP page names for a host's credential (`cat data/NAME`)."""
    section = MCP_PAGE.read_text().split("## Configuring hosts", 1)[1]
    found = re.search(r"data/([a-z-]+-token)", section)
    assert found, "the MCP page names no credential file for hosts"
    return found.group(1)


def snippet(section: str, language: str) -> str:
    """The first `language` block under `### section` of the MCP page."""
    text = MCP_PAGE.read_text().split(f"### {section}\n", 1)[1]
    return text.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def configured(text: str, up: Up) -> str:
    """A snippet with this server's address and the credential the page names."""
    assert "<token>" in text and "127.0.0.1:50051" in text
    return text.replace("127.0.0.1:50051", up.address).replace("<token>", up.host_credential())


# --- the hosts ---------------------------------------------------------------------------


@dataclass
class Session:
    """One host session: the prompt, and the user's answer to a save prompt (None: the
    host has no one to ask, as `codex exec`)."""

    prompt: str
    answer: dict[str, Any] | None = None
    asked: list[str] = field(default_factory=list)  # the save prompts the user was shown


@dataclass
class Host:
    name: str  # as its model names it in save_intent_source
    run: Callable[[Up, ScriptedModel, Session, Path], str]
    asks: bool  # can ask its user through MCP elicitation


def wrapper(tmp: Path) -> Path:
    """A folder with an `agentmem` command of this checkout, for the host's PATH (the
    snippets start `agentmem mcp`)."""
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "agentmem"
    script.write_text(
        f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} "
        f'exec {shlex.quote(sys.executable)} -m agentmem.cli.main "$@"\n'
    )
    script.chmod(0o755)
    return folder


def host_env(tmp: Path, **extra: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTMEM_")}
    path = f"{wrapper(tmp)}:{env.get('PATH', '')}"
    return {**env, "HOME": str(home), "PATH": path, "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local/state"), **extra}  # fmt: skip


def finished(done: subprocess.CompletedProcess[str], what: str) -> str:
    assert done.returncode == 0, (what, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def run_opencode(up: Up, model: ScriptedModel, session: Session, tmp: Path) -> str:
    """`opencode run` in a project whose opencode.json is the page's snippet, with an
    OpenAI-compatible provider at the scripted model."""
    project = tmp / "project"
    project.mkdir()
    config = json.loads(configured(snippet("opencode", "json"), up))
    config.update(
        autoupdate=False,
        share="disabled",
        model="scripted/scripted",
        small_model="scripted/scripted",
        provider={
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": f"{model.url}/v1", "apiKey": "scripted"},
                "models": {"scripted": {"name": "Scripted", "tool_call": True}},
            }
        },
    )
    (project / "opencode.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(BIN / "opencode"), "run", session.prompt],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=project,
        env=host_env(tmp, PWD=str(project), OPENCODE_DISABLE_MODELS_FETCH="1"),
    )
    return finished(done, "opencode run")


CLAUDE_HOOK = """\
import json, pathlib, sys
asked = json.load(sys.stdin)
here = pathlib.Path(__file__).parent
with open(here / "asked.jsonl", "a") as f:
    f.write(json.dumps(asked.get("message", "")) + "\\n")
answer = json.loads((here / "answer.json").read_text())
print(json.dumps({"hookSpecificOutput": {"hookEventName": "Elicitation", **answer}}))
"""


def run_claude(up: Up, model: ScriptedModel, session: Session, tmp: Path) -> str:
    """The page's `claude mcp add` command, then `claude -p` against the scripted model
    (Anthropic's Messages API at ANTHROPIC_BASE_URL). Without a terminal the user answers a
    save prompt through Claude Code's Elicitation hook."""
    env = host_env(
        tmp,
        ANTHROPIC_BASE_URL=model.url,
        ANTHROPIC_API_KEY="scripted",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        ENABLE_TOOL_SEARCH="false",  # every tool listed to the model, none deferred
    )
    add = shlex.split(configured(snippet("Claude Code", "sh"), up).replace("\\\n", " "))
    assert add[:3] == ["claude", "mcp", "add"], add
    finished(subprocess.run([str(BIN / "claude"), *add[1:]], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp), "claude mcp add")  # fmt: skip
    hook = tmp / "hook"
    hook.mkdir()
    (hook / "answer.py").write_text(CLAUDE_HOOK)
    (hook / "answer.json").write_text(json.dumps(session.answer or NO))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(hook / 'answer.py'))}"
    settings = {"hooks": {"Elicitation": [
        {"matcher": "agentmem", "hooks": [{"type": "command", "command": command}]}
    ]}}  # fmt: skip
    claude_dir = tmp / "home" / ".claude"
    claude_dir.mkdir(parents=True, exist_ok=True)
    (claude_dir / "settings.json").write_text(json.dumps(settings))
    project = tmp / "project"
    project.mkdir()
    done = subprocess.run(
        [str(BIN / "claude"), "-p", session.prompt, "--allowedTools", "mcp__agentmem"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=project,
        env=env,
    )
    asked = hook / "asked.jsonl"
    if asked.exists():
        session.asked += [json.loads(line) for line in asked.read_text().splitlines()]
    return finished(done, "claude -p")


def codex_home(up: Up, model: ScriptedModel, tmp: Path) -> Path:
    """CODEX_HOME with the page's snippet and a model provider at the scripted model
    (Codex speaks the Responses API)."""
    home = tmp / "codex-home"
    home.mkdir()
    provider = textwrap.dedent(f"""\
        model = "scripted"
        model_provider = "scripted"

        [model_providers.scripted]
        name = "scripted"
        base_url = "{model.url}/v1"
        env_key = "SCRIPTED_API_KEY"
        wire_api = "responses"

        """)
    (home / "config.toml").write_text(provider + configured(snippet("Codex", "toml"), up))
    return home


def run_codex(up: Up, model: ScriptedModel, session: Session, tmp: Path) -> str:
    """`codex exec` when no one is there to answer; else Codex's app-server, where the test
    plays Codex's interface and so its user."""
    env = host_env(tmp, CODEX_HOME=str(codex_home(up, model, tmp)), SCRIPTED_API_KEY="scripted")
    project = tmp / "project"
    project.mkdir()
    if session.answer is None:
        done = subprocess.run(
            [str(BIN / "codex"), "exec", "--skip-git-repo-check", session.prompt],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=project,
            env=env,
        )
        return finished(done, "codex exec")
    return codex_turn(env, project, session)


def codex_turn(env: dict[str, str], project: Path, session: Session) -> str:
    proc = subprocess.Popen(
        [str(BIN / "codex"), "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=project,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    ids = iter(range(1, 100))
    said: list[str] = []

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def until(done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line)
            if done(message):
                return message
            if message.get("method") == "mcpServer/elicitation/request" and "id" in message:
                asked = message["params"].get("message", "")
                session.asked.append(asked)
                answer = session.answer if asked.startswith(SAVE_PROMPT) else {"action": "accept"}
                send({"id": message["id"], "result": answer})
            elif "id" in message and "method" in message:  # another approval: not the user's
                send({"id": message["id"], "result": {"decision": "decline"}})
            elif message.get("method") == "item/completed":
                item = message["params"].get("item", {})
                if item.get("type") == "agentMessage":
                    said.append(item.get("text", ""))
        raise EOFError("codex app-server ended")

    def request(method: str, params: Any) -> dict[str, Any]:
        request_id = next(ids)
        send({"id": request_id, "method": method, "params": params})
        answer = until(lambda m: m.get("id") == request_id and "method" not in m)
        assert "result" in answer, (method, answer)
        return answer["result"]

    try:
        hello = {"clientInfo": {"name": "tests", "version": "1.0"}}
        request("initialize", {**hello, "capabilities": {"experimentalApi": True}})
        send({"method": "initialized"})
        thread = request("thread/start", {"cwd": str(project)})["thread"]["id"]
        text = [{"type": "text", "text": session.prompt}]
        request("turn/start", {"threadId": thread, "input": text})
        until(lambda m: m.get("method") == "turn/completed")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return "\n".join(said)


HOSTS_UNDER_TEST = {
    "opencode": Host("opencode", run_opencode, asks=False),
    "codex": Host("codex", run_codex, asks=True),
    "claude": Host("claude-code", run_claude, asks=True),
}
host_param = pytest.mark.parametrize("host", list(HOSTS_UNDER_TEST))


def turn(
    up: Up, tmp: Path, host: str, session: Session, steps: list[Call | Say]
) -> tuple[ScriptedModel, str]:
    """One session of `host` whose model follows `steps`; the model, what the host printed."""
    with ScriptedModel({session.prompt: steps}) as model:
        out = HOSTS_UNDER_TEST[host].run(up, model, session, tmp)
    assert model.errors == [], model.errors
    return model, out


def new_sources(up: Up, before: dict[str, Any]) -> list[Any]:
    return [m for sid, m in up.memories().items() if sid not in before]


def results(model: ScriptedModel) -> list[str]:
    """The tool results the host sent the model, but its own (Claude Code's waiting), each
    as the tool said it (Codex puts "Wall time: …\nOutput:\n" in front)."""
    return [
        r.split("\nOutput:\n", 1)[1] if r.startswith("Wall time:") else r
        for r in model.tool_results()
        if not r.startswith("ready: ")
    ]


# --- the scenes --------------------------------------------------------------------------


@host_param
def test_a_statement_in_conversation_is_not_saved_under_require_save_intent(up, tmp_path, host):
    up.policy("require_save_intent")
    before = up.memories()
    # The user asked nothing; the model saves on its own, without a save intent. Claude
    # Code's user says no when asked; `codex exec` has no one to ask (Codex declines).
    session = Session(STATEMENT, answer=NO if host == "claude" else None)
    steps = [Call("memory_insert", {"content": STATEMENT}), Say("Nice guitar!")]
    model, _ = turn(up, tmp_path, host, session, steps)
    assert new_sources(up, before) == []
    (refused,) = results(model)
    # The gateway refuses it; a host that can ask its user asks first, and hears no.
    reason = "SAVE_NOT_CONFIRMED" if HOSTS_UNDER_TEST[host].asks else "SAVE_INTENT_REQUIRED"
    assert refused.startswith(reason), refused
    assert STATEMENT not in refused


@host_param
def test_the_models_own_approval_leaves_its_save_pending(up, tmp_path, host):
    up.policy("review_pending")
    before = up.memories()
    # The model saves on its own (a host that asks its user is told yes), then approves it.
    session = Session(STATEMENT, answer=YES if HOSTS_UNDER_TEST[host].asks else None)
    steps = [
        Call("memory_insert", {"content": STATEMENT}),
        Call("memory_pending_approve", inserted),
        Say("Saved and approved."),
    ]
    model, _ = turn(up, tmp_path, host, session, steps)
    (saved,) = new_sources(up, before)
    assert saved.status == 2, saved  # STATUS_PENDING_REVIEW: the agent could not approve it
    with up.person() as person:
        assert person.get_source(source_id=saved.source_id).status == 2
    refused = results(model)[-1]
    # The model is told that this is the person's decision, and where the person makes it.
    assert refused.startswith("MISSING_SCOPE"), refused
    assert "person" in refused and "agentmem memories review" in refused, refused
    assert STATEMENT not in refused


@host_param
def test_remember_that_stores_the_memory_for_the_person_to_approve(up, tmp_path, host):
    up.policy("require_save_intent")
    before = up.memories()
    asks = HOSTS_UNDER_TEST[host].asks
    session = Session(REMEMBER, answer=YES if asks else None)
    claim = {
        "save_intent": "explicit_user_request",
        "save_intent_source": HOSTS_UNDER_TEST[host].name,
    }
    steps = [Call("memory_insert", {"content": GUITAR, **claim}), Say("I'll remember that.")]
    model, _ = turn(up, tmp_path, host, session, steps)
    if asks:  # the user was asked, with the text, and said yes
        assert session.asked == [f"{SAVE_PROMPT}\n\n{GUITAR}"]
    (saved,) = new_sources(up, before)
    assert saved.content == GUITAR
    # An agent's word that the user asked (or confirmed) waits for the person.
    assert saved.save_intent == ("user_confirmed" if asks else "explicit_user_request")
    assert saved.save_intent_held and saved.status == 2
    (stored,) = results(model)
    assert json.loads(stored)["save_intent_held"] is True
    with up.person() as person:  # the person approves: it is retrievable
        person.review_memory(source_id=saved.source_id, decision="approve", expected_revision=1)
        assert saved.source_id in [h.source_id for h in person.search_memories(query="Squier").hits]


@host_param
def test_a_new_sessions_question_gets_the_memory_in_the_tool_result(up, tmp_path, host):
    with up.person() as person:  # the person saved it earlier (the CLI's `agentmem insert`)
        person.insert_memory(content=GUITAR, save_intent="explicit_user_request")
    session = Session(QUESTION)
    steps = [Call("memory_search", {"query": "guitar"}), Say("A yellow Squier Tele.")]
    model, out = turn(up, tmp_path, host, session, steps)
    (found,) = results(model)
    assert "yellow Squier Tele" in found, found
    assert "A yellow Squier Tele." in out
