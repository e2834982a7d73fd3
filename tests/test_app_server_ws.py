"""`agentmem app-server --listen ws://...`: probes, browser origins refused, the bearer
token at the handshake, a session over text frames, gating that follows the gateway's own
capability settings, over-size frames, and a port already in use."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agentmem_kernel import config
from tests.app_server_support import WebSocketHost, conforms
from tests.harness import ADMIN_A, ROOT, Stack, base_settings, wait_until


@pytest.fixture(scope="module")
def stack(loop_thread, tmp_path_factory):
    # facts experimental on this gateway: the bridge must learn it from the gateway
    db = tmp_path_factory.mktemp("app-server-ws") / "agentmem.db"
    settings = config.load(None, base_settings(db, **{"capabilities.facts": "experimental"}))
    shared = Stack(loop_thread, settings, db).start()
    yield shared
    shared.stop()


def _bridge(stack: Stack, listen: str, *more: str) -> list[str]:
    """The command line of a bridge in front of `stack`'s gateway, which these tests use as
    the person, on purpose."""
    return [
        *(sys.executable, "-m", "agentmem.cli.main", "app-server"),
        *("--addr", stack.address, "--listen", listen, "--allow-person-credential", *more),
    ]


@pytest.fixture(scope="module")
def url(stack, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ws-bridge")
    port_file, log = tmp / "port", tmp / "stderr.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            _bridge(
                stack,
                "ws://127.0.0.1:0",
                "--port-file",
                str(port_file),
                "--max-message-bytes",
                "65536",
            ),
            env={k: v for k, v in os.environ.items() if k != "AGENTMEM_TOKEN"},
            stderr=stderr,
            cwd=ROOT,
        )
        try:
            wait_until(lambda: port_file.exists() or proc.poll() is not None, 60, "the port file")
            assert proc.poll() is None, log.read_text()
            yield f"ws://127.0.0.1:{port_file.read_text()}"
        finally:
            proc.terminate()
            assert proc.wait(timeout=30) == 0
    assert ADMIN_A.token not in log.read_text()


def _get(url: str, path: str, **headers: str) -> int:
    request = urllib.request.Request(url.replace("ws://", "http://") + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_probes_and_browser_origins(url):
    assert _get(url, "/readyz") == 200
    assert _get(url, "/healthz") == 200
    assert _get(url, "/healthz", Origin="https://evil.example") == 403
    with pytest.raises(InvalidStatus) as refused:
        WebSocketHost(url, ADMIN_A.token, origin="https://evil.example")
    assert refused.value.response.status_code == 403


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}]
)
def test_the_handshake_needs_a_bearer_token_the_gateway_accepts(url, headers):
    from websockets.sync.client import connect

    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers=headers)
    assert refused.value.response.status_code == 401


def test_a_session_over_websocket(url, stack):
    host = WebSocketHost(url, ADMIN_A.token)
    try:
        opened = host.initialize(experimental=False)
        # facts are experimental on this gateway, so the bridge gates them
        assert "memory/facts/search" not in opened["methods"]
        refused = host.error("memory/facts/search", {"query": "x"})
        assert refused["message"] == "memory/facts/search requires experimentalApi capability"
        read = host.result("thread/memoryMode/read", {"threadId": "ws-1"})
        assert read == {"threadId": "ws-1", "mode": "enabled", "revision": 0, "effectiveAt": None}
        done = host.result(
            "thread/memoryMode/set", {"threadId": "ws-1", "expectedRevision": 0, "mode": "disabled"}
        )
        conforms(done, "ThreadMemoryModeSetResponse")
        stack.client().set_thread_memory_mode(thread_id="ws-1", mode="enabled", expected_revision=1)
        updated = host.notification(
            "thread/memoryMode/updated", lambda p: p["threadId"] == "ws-1" and p["revision"] == 2
        )
        assert (updated["previousMode"], updated["mode"]) == ("disabled", "enabled")
        stale = host.error(
            "thread/memoryMode/set", {"threadId": "ws-1", "expectedRevision": 1, "mode": "disabled"}
        )
        assert stale["data"] == {
            "reason": "REVISION_MISMATCH",
            "currentRevision": 2,
            "target": "thread/ws-1",
        }
        host.write("{not json")  # not answered (no id to answer), the connection kept
        assert host.result("thread/memoryMode/read", {"threadId": "ws-1"})["revision"] == 2
    finally:
        host.close()
    opted = WebSocketHost(url, ADMIN_A.token)
    try:
        assert "memory/facts/search" in opted.initialize(experimental=True)["methods"]
        conforms(opted.result("memory/facts/search", {"query": "x"}), "MemoryFactsSearchResponse")
    finally:
        opted.close()


def test_an_over_size_frame_closes_the_connection_with_1009(url):
    host = WebSocketHost(url, ADMIN_A.token, max_size=None)
    host.initialize()
    host.write(
        '{"id": 1, "method": "memory/insert", "params": {"content": "' + "x" * 70_000 + '"}}'
    )
    with pytest.raises(EOFError):
        host.next_message()
    assert host.ws.close_code == 1009
    with pytest.raises(ConnectionClosed):
        host.ws.send("{}")
    again = WebSocketHost(url, ADMIN_A.token)  # the listener goes on
    assert again.initialize()["userAgent"].startswith("agentmem-app-server/")
    again.close()


def test_a_port_in_use_is_one_line_naming_the_address(stack):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            _bridge(stack, f"ws://127.0.0.1:{port}"),
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "ADDRESS_IN_USE" in lines[0] and f"127.0.0.1:{port}" in lines[0], done.stderr
