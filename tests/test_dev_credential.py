"""`agentmem up` keeps its dev credential in the data directory and reuses it."""

from __future__ import annotations

import os
import re
import stat

from agentmem.client import NO_RETRY, Client
from agentmem_launcher import dev_credential
from tests.harness import Process


def _up(tmp_path, data, *extra: str) -> tuple[Process, list[str]]:
    proc = Process(
        ["up", "--listen", "127.0.0.1:0", "--data-dir", str(data), *extra],
        {"AGENTMEM_DEV_TOKEN": ""},
        tmp_path,
        "up",
    )
    return proc, [proc.proc.stdout.readline().decode() for _ in range(3)]


def test_up_reuses_the_dev_credential_across_restarts(tmp_path):
    data = tmp_path / "data"
    first, lines = _up(tmp_path, data)
    try:
        token = re.search(r"AGENTMEM_TOKEN=(\S+)", lines[2]).group(1)
        path = data.resolve() / "dev-token"
        assert f"kept in {path}" in lines[1] and "new" in lines[1]
        assert path.read_text().strip() == token
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        assert first.terminate() == 0
    second, lines = _up(tmp_path, data)
    try:
        assert "reused" in lines[1]
        assert re.search(r"AGENTMEM_TOKEN=(\S+)", lines[2]).group(1) == token
        with Client(second.address, token, retry=NO_RETRY) as c:  # the saved token still works
            assert c.read_thread_memory_mode(thread_id="t1").revision == 0
    finally:
        assert second.terminate() == 0


def test_rotation_and_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(dev_credential.ENV, raising=False)
    first = dev_credential.load_or_mint(tmp_path)
    assert first.minted and dev_credential.load_or_mint(tmp_path).token == first.token
    rotated = dev_credential.load_or_mint(tmp_path, rotate=True)
    assert rotated.minted and rotated.token != first.token
    assert (tmp_path / "dev-token").read_text().strip() == rotated.token
    assert stat.S_IMODE(os.stat(tmp_path / "dev-token").st_mode) == 0o600
    monkeypatch.setenv(dev_credential.ENV, "chosen-token")
    chosen = dev_credential.load_or_mint(tmp_path, rotate=True)
    assert chosen.token == "chosen-token" and chosen.path is None
    assert (tmp_path / "dev-token").read_text().strip() == rotated.token  # untouched
    assert "AGENTMEM_DEV_TOKEN" in dev_credential.describe(chosen)
