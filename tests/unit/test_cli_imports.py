"""The `agentmem` command imports only what the chosen command needs (bench/cli_start.py
measures the time; this holds the structure, never a time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Imported only by the commands that use them (mcp, console, app-server, the services).
HEAVY = {
    "mcp",
    "starlette",
    "uvicorn",
    "pydantic",
    "pydantic_settings",
    "websockets",
    "jsonschema",
    "tqdm",
    "yaml",
    "sqlalchemy",
    "agentmem_kernel",
    "agentmem.client.aio",
    "regex",  # agentmem.contract.invisible's, for text that is not plain ASCII
}


def imported(*argv: str) -> set[str]:
    """The top-level packages (and agentmem's modules) `agentmem ARGV` imports."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentmem.cli.main", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name if name.startswith("agentmem.") else name.split(".")[0])
    return names


def test_version_is_answered_before_any_library_loads() -> None:
    names = imported("--version")
    assert not names & (HEAVY | {"grpc", "google", "asyncio", "agentmem_launcher"}), names


@pytest.mark.parametrize("argv", [["search", "--help"], ["doctor", "--help"]])
def test_a_client_command_skips_the_other_commands_libraries(argv: list[str]) -> None:
    names = imported(*argv)
    assert not names & (HEAVY | {"agentmem_launcher"}), names & (HEAVY | {"agentmem_launcher"})


def test_the_whole_help_lists_the_services_without_importing_them() -> None:
    names = imported("--help")
    assert "agentmem_launcher" in names  # `up`, `gateway`, `runtime` are listed
    assert not names & HEAVY, names & HEAVY


def test_the_launchers_log_file_help_matches_the_services() -> None:
    from agentmem_kernel.launch import LOG_FILE_HELP
    from agentmem_launcher import commands

    assert commands.LOG_FILE_HELP == LOG_FILE_HELP


def test_the_version_is_the_distributions() -> None:
    from importlib.metadata import version

    from agentmem.cli import main

    assert main._version() == version("agentmem-client")
