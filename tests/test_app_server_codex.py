"""The bridge as a Codex-shaped host sees it: Codex's own memory methods, its handshake
fields, and the bridge failing as a client error (never -32603, never a traceback) on text
that is not valid Unicode, a resume point past int64 and a host that stops reading."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentmem.client import person_credential
from agentmem_kernel import config
from tests.app_server_support import CLIENT_INFO, StdioHost, conforms
from tests.harness import ADMIN_A, READER_A, ROOT, Stack, base_settings
from tests.test_facts import SQUIER


@pytest.fixture(scope="module")
def stack(loop_thread, tmp_path_factory):
    db = tmp_path_factory.mktemp("app-server-codex") / "agentmem.db"
    shared = Stack(loop_thread, config.load(None, base_settings(db)), db).start()
    yield shared
    shared.stop()


@pytest.fixture
def bridge(stack, tmp_path):
    hosts: list[StdioHost] = []

    def start(token: str = ADMIN_A.token) -> StdioHost:
        host = StdioHost(stack.address, token, tmp_path)
        hosts.append(host)
        return host

    yield start
    for host in hosts:
        host.close()
        assert "Traceback" not in host.stderr and ADMIN_A.token not in host.stderr


def opened(bridge, token: str = ADMIN_A.token) -> StdioHost:
    host = bridge(token)
    host.initialize()
    return host


def sources(stack) -> int:
    return stack.sql("SELECT count(*) FROM sources")[0][0]


def test_initialize_carries_codexs_required_fields_with_honest_values(bridge):
    result = opened(bridge).opened
    conforms(result, "InitializeResponse")
    assert os.path.isabs(result["codexHome"]) and result["codexHome"] == str(ROOT.resolve())
    expected_os = {"darwin": "macos", "win32": "windows"}.get(sys.platform, "linux")
    assert result["platformOs"] == expected_os
    assert result["platformFamily"] == ("windows" if expected_os == "windows" else "unix")
    assert result["userAgent"].startswith("agentmem-app-server/")


def test_thread_memory_read_is_the_profile_unless_the_thread_is_disabled(bridge):
    host = opened(bridge)
    saved = host.result(
        "memory/insert",
        {"content": SQUIER, "metadata": {"saveIntent": "explicit_user_request"}},
    )
    assert saved["status"] == "active"
    summary = host.result("thread/memory/read", {"threadId": "cx-1", "turnId": "ignored"})
    conforms(summary, "ThreadMemoryReadResponse")
    assert summary["summary"] and "Squier" in summary["summary"]
    host.result("thread/memoryMode/set", {"threadId": "cx-1", "mode": "disabled"})
    assert host.result("thread/memory/read", {"threadId": "cx-1"}) == {"summary": None}
    missing = host.error("thread/memory/read", {})
    assert missing["code"] == -32600 and missing["data"]["fieldViolations"] == [
        {"field": "threadId", "description": "is required"}
    ]


def test_memory_status_answers_in_codexs_shape(bridge):
    status = opened(bridge).result("memory/status", {"minConsolidatedThreads": 20})
    conforms(status, "MemoryStatusResponse")
    assert status == {"v2ConsolidatedThreads": 0, "v2Ready": True}
    for bad in (0, 4097):
        refused = opened(bridge).error("memory/status", {"minConsolidatedThreads": bad})
        assert refused["code"] == -32602 and refused["data"]["reason"] == "INVALID_FIELD"


@pytest.mark.parametrize("token", [ADMIN_A.token, READER_A.token])
def test_memory_reset_is_refused_and_erases_nothing(bridge, stack, token):
    host = opened(bridge, token)
    stack.client().insert_memory(content="kept", save_intent="explicit_user_request")
    before = sources(stack)
    for params in (None, {}, {"everything": True}):
        refused = host.error("memory/reset", params)
        assert refused["code"] == -32600
        assert refused["data"] == {
            "reason": "MEMORY_RESET_REFUSED",
            "alternative": "memory/sources/erase",
        }
    assert sources(stack) == before


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("memory/search", {"query": "\ud800"}, "query"),
        ("memory/insert", {"content": "a \udfff b"}, "content"),
        ("thread/memoryMode/read", {"threadId": "t\ud800"}, "threadId"),
        ("memory/insert", {"metadata": {"labels": {"\ud800": "v"}}}, "metadata.labels"),
        ("memory/insert", {"messages": [{"content": "\udc00"}]}, "messages.0.content"),
    ],
)  # fmt: skip
def test_text_that_is_not_unicode_is_refused_as_bad_params(bridge, stack, method, params, field):
    host = opened(bridge)
    before = sources(stack)
    refused = host.error(method, params)
    assert refused["code"] == -32600
    assert refused["data"] == {
        "reason": "INVALID_FIELD",
        "fieldViolations": [{"field": field, "description": "must be valid Unicode text"}],
    }
    assert sources(stack) == before
    assert host.close() == 0
    assert "ERROR" not in host.stderr and "Traceback" not in host.stderr


@pytest.mark.parametrize("sequence", [2**63, 2**64, -1])
def test_a_resume_point_out_of_range_is_refused_at_initialize(bridge, sequence):
    host = bridge()
    refused = host.error("initialize", {"clientInfo": CLIENT_INFO, "eventsAfterSequence": sequence})
    assert refused["code"] == -32602
    assert refused["data"]["fieldViolations"] == [
        {"field": "eventsAfterSequence", "description": "is out of range"}
    ]
    # the connection stays uninitialized: the host can open it again
    assert host.initialize()["methods"]


def test_a_host_that_stops_reading_ends_the_bridge_with_exit_0_and_one_log_line(stack, tmp_path):
    env = {**os.environ, "AGENTMEM_TOKEN": ADMIN_A.token, person_credential.ENV: "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmem.cli.main", "app-server", "--addr", stack.address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"id": 1, "method": "initialize", "params": {"clientInfo": CLIENT_INFO}}
    proc.stdin.write(json.dumps(hello).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()  # the host stops reading
    ask = {"id": 2, "method": "thread/memoryMode/read", "params": {"threadId": "gone-1"}}
    proc.stdin.write(json.dumps(ask).encode() + b"\n")
    proc.stdin.flush()
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stderr is not None
    log = proc.stderr.read().decode()
    lines = [line for line in log.splitlines() if line.strip()]
    assert len(lines) == 1 and "the host stopped reading" in lines[0], log
