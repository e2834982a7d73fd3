"""Configuration: defaults, environment overrides, and refusing unknown keys or bad values."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentmem_kernel import config
from tests.harness import ROOT


def test_every_key_has_a_default():
    s = config.load()
    assert s.memory.insert_policy == "permissive" and s.memory.default_thread_mode == "enabled"
    assert s.capabilities.thread_memory_mode and s.events.retention.days == 7


def test_environment_overrides_the_file(tmp_path, monkeypatch):
    f = tmp_path / "c.yaml"
    f.write_text("memory:\n  insert_policy: review_pending\n  default_thread_mode: disabled\n")
    monkeypatch.setenv("AGENTMEM_MEMORY__INSERT_POLICY", "require_save_intent")
    s = config.load(f)
    assert s.memory.insert_policy == "require_save_intent"
    assert s.memory.default_thread_mode == "disabled"


@pytest.mark.parametrize(
    ("yaml_text", "named"),
    [
        ("memory:\n  bogus: 1\n", "memory.bogus: unknown key"),
        ("memory:\n  insert_policy: sometimes\n", "memory.insert_policy"),
        ("events:\n  retention: soon\n", "events.retention"),
        (
            "auth:\n  api_keys:\n"
            "    - {principal: p, tenant: t, sha256: nothex, scopes: [memory.read]}\n",
            "auth.api_keys.0.sha256",
        ),
        ("capabilities:\n  telepathy: true\n", "capabilities.telepathy: unknown key"),
    ],
)
def test_bad_config_stops_start_up_naming_the_key(tmp_path, yaml_text, named):
    f = tmp_path / "bad.yaml"
    f.write_text(yaml_text)
    with pytest.raises(config.ConfigError) as e:
        config.load(f)
    assert named in str(e.value)
    result = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "runtime", "--config", str(f)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and named in result.stderr
