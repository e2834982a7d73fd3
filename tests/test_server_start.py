"""Starting servers as a newcomer does: a port in use is refused by every server in one
line; `agentmem up` works from any folder, leaves out a console it cannot import without
taking the services down, and keeps its terminal to the banner while calls go to log files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from agentmem.client import NO_RETRY, Client
from agentmem.process.listen import EXIT_ADDRESS_IN_USE
from tests.harness import ROOT, wait_until

AGENTMEM = str(Path(sys.executable).with_name("agentmem"))  # the command, as a user runs it
WORDS_ONLY = {"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"}  # where the model plays no part


@pytest.fixture
def taken() -> Iterator[str]:
    """An address held by a gRPC server with gRPC's default options (SO_REUSEPORT on), as a
    first `agentmem up` of an earlier release would hold it."""
    server = grpc.server(futures.ThreadPoolExecutor(1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None)


def _refused(argv: list[str], address: str, tmp_path: Path, **env: str) -> str:
    """The command ends non-zero with exactly one line on stderr that names the address and
    ADDRESS_IN_USE, no traceback, and never says it serves."""
    try:
        done = subprocess.run(
            [AGENTMEM, *argv],
            cwd=tmp_path,
            env={**os.environ, "AGENTMEM_DEV_TOKEN": "", **env},
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired as e:  # it served on the taken port instead
        pytest.fail(f"{argv[0]} kept running on a taken port: {e.stdout!r}")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == EXIT_ADDRESS_IN_USE, done.stderr
    assert len(lines) == 1, done.stderr
    assert "ADDRESS_IN_USE" in lines[0] and address in lines[0]
    assert "serving" not in done.stdout
    return lines[0]


def test_a_second_up_on_a_taken_port_is_refused_in_one_line(tmp_path):
    first = subprocess.Popen(
        [AGENTMEM, "up", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "one")],
        cwd=tmp_path,
        env={**os.environ, "AGENTMEM_DEV_TOKEN": "", **WORDS_ONLY},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        address = re.search(r"serving on (\S+)", first.stdout.readline()).group(1)
        line = _refused(
            ["up", "--listen", address, "--data-dir", str(tmp_path / "two")],
            address,
            tmp_path,
            **WORDS_ONLY,
        )
        assert "--listen HOST:PORT" in line and "make run LISTEN=" in line  # how to choose
        line = _refused(
            ["up", "--listen", "127.0.0.1:0", "--console", address, "--data-dir", "three"],
            address,
            tmp_path,
            **WORDS_ONLY,
        )
        assert "--console HOST:PORT" in line and "make run CONSOLE=" in line
        assert first.poll() is None  # the first one still serves
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 0


@pytest.mark.parametrize("kind", ["gateway", "runtime", "console", "mcp-http", "metrics"])
def test_every_server_refuses_a_taken_port(kind, taken, tmp_path):
    port = taken.rsplit(":", 1)[1]
    env: dict[str, str] = {"AGENTMEM_INTERNAL__TOKEN": "internal-for-test"}
    argv = {
        "gateway": ["gateway", "--listen", taken],
        "runtime": ["runtime", "--listen", taken, "--data-dir", str(tmp_path / "data")],
        "console": ["console", "--listen", taken],
        "mcp-http": ["mcp", "--transport", "http", "--host", "127.0.0.1", "--port", port],
        "metrics": ["gateway", "--listen", "127.0.0.1:0"],
    }[kind]
    if kind == "metrics":
        env["AGENTMEM_GATEWAY__METRICS_LISTEN"] = taken
    _refused(argv, taken, tmp_path, **env)


class Up:
    """`agentmem up` as a person starts it: the installed command, from `cwd`, with its
    terminal (stdout and stderr together) kept in a file."""

    def __init__(self, tmp_path: Path, cwd: Path, *extra: str, env: dict[str, str] | None = None):
        self.terminal = tmp_path / "terminal.txt"
        self.data = tmp_path / "data"
        with self.terminal.open("w") as out:
            self.proc = subprocess.Popen(
                [AGENTMEM, "up", "--listen", "127.0.0.1:0", "--data-dir", str(self.data), *extra],
                cwd=cwd,
                env={**os.environ, "AGENTMEM_DEV_TOKEN": "", **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_until(self._banner_done, 120, "the banner")

    def _banner_done(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"up exited {self.proc.returncode}: {self.text()}")
        return "call logs in" in self.text()

    def text(self) -> str:
        return self.terminal.read_text()

    @property
    def token(self) -> str:
        return re.search(r"AGENTMEM_TOKEN=(\S+)", self.text()).group(1)

    @property
    def address(self) -> str:
        return re.search(r"AGENTMEM_ADDR=(\S+)", self.text()).group(1)

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=60) == 0
        return self.text()


def test_up_from_a_folder_holding_a_folder_named_agentmem(tmp_path):
    parent = tmp_path / "work"
    (parent / "agentmem" / "agentmem").mkdir(parents=True)  # the parent of a clone
    up = Up(tmp_path, parent, env=WORDS_ONLY)
    try:
        with Client(up.address, up.token, retry=NO_RETRY) as client:
            assert client.read_thread_memory_mode(thread_id="t1").revision == 0
    finally:
        up.stop()


def test_up_leaves_out_a_console_it_cannot_import_in_one_line(tmp_path):
    missing = tmp_path / "site"
    (missing / "uvicorn").mkdir(parents=True)
    (missing / "uvicorn" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'uvicorn'\", name='uvicorn')\n"
    )
    up = Up(
        tmp_path,
        tmp_path,
        "--console",
        "127.0.0.1:0",
        env={"PYTHONPATH": str(missing), **WORDS_ONLY},
    )
    try:
        lines = up.text().splitlines()
        assert not [line for line in lines if line.startswith("agentmem console on")]
        skipped = [line for line in lines if line.startswith("agentmem: ")]
        assert skipped == [
            "agentmem: the console is not started: uvicorn cannot be imported: install the "
            "console's extra, agentmem-client[console] (from a checkout: pip install "
            "'./client[console]')"
        ]
        with Client(up.address, up.token, retry=NO_RETRY) as client:  # the services run
            assert client.read_thread_memory_mode(thread_id="t1").revision == 0
    finally:
        up.stop()


def test_the_console_is_in_the_default_install():
    import tomllib

    service = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    client = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    assert "agentmem-client[console]==0.1.0" in service["dependencies"]  # the client's extra
    console = {
        re.split(r"[<>=\[; ]", d)[0].lower() for d in client["optional-dependencies"]["console"]
    }
    assert {"starlette", "jinja2", "python-multipart", "sse-starlette", "uvicorn"} <= console


def _call_methods(log: Path) -> set[str]:
    if not log.exists():
        return set()
    calls = [json.loads(x) for x in log.read_text().splitlines() if '"msg": "call"' in x]
    return {call["method"].rsplit("/", 1)[-1] for call in calls}


def test_up_keeps_its_terminal_to_the_banner_and_calls_go_to_log_files(tmp_path):
    up = Up(tmp_path, tmp_path)
    banner = up.text().splitlines()
    with Client(up.address, up.token, retry=NO_RETRY) as client:
        for n in range(5):
            client.insert_memory(content=f"I have {n} yellow guitars")
        client.search_memories(query="yellow guitars")
        client.read_thread_memory_mode(thread_id="t1")
    logs = up.data / "logs"
    wanted = {"InsertMemory", "SearchMemories", "ReadThreadMemoryMode"}
    wait_until(lambda: wanted <= _call_methods(logs / "gateway.log"), 30, "the call lines")
    wait_until(lambda: "InsertMemory" in _call_methods(logs / "runtime.log"), 30, "runtime's")
    terminal = up.stop().splitlines()
    assert terminal == banner  # after the banner, nothing: no line per call, none at stop
    assert [line for line in banner if line.startswith("{")] == []
    assert banner[0].startswith("agentmem is serving on ")
    assert "AGENTMEM_TOKEN=" in banner[-3] and banner[-1].startswith("call logs in ")
    assert banner[-2].startswith("an agent's credential, for hosts")
    runtime_log = (logs / "runtime.log").read_text()
    assert '"msg": "serving"' in runtime_log and up.token not in runtime_log


def test_packaging_metadata_has_no_deprecated_keys(tmp_path):
    """The editable install `make run` does printed setuptools' deprecation banners."""
    code = (
        "import warnings, sys\n"
        "from setuptools.warnings import SetuptoolsDeprecationWarning\n"
        "warnings.simplefilter('error', SetuptoolsDeprecationWarning)\n"
        "import setuptools.build_meta as b\n"
        "b.prepare_metadata_for_build_wheel(sys.argv[1])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    metadata = next(tmp_path.glob("*.dist-info/METADATA")).read_text()
    assert "License-Expression: Apache-2.0" in metadata


def test_a_second_up_on_the_same_data_folder_is_refused_naming_the_holder(tmp_path):
    first = Up(tmp_path, tmp_path, env=WORDS_ONLY)
    try:
        second = subprocess.run(
            [AGENTMEM, "up", "--listen", "127.0.0.1:0", "--data-dir", str(first.data)],
            cwd=tmp_path,
            env={**os.environ, "AGENTMEM_DEV_TOKEN": "", **WORDS_ONLY},
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert second.returncode != 0 and "serving" not in second.stdout
        (line,) = second.stderr.strip().splitlines()
        assert "in use by another agentmem up" in line
        assert f"pid {first.proc.pid}" in line and first.address in line
        with Client(first.address, first.token, retry=NO_RETRY) as client:  # still serves
            assert client.read_thread_memory_mode(thread_id="t1").revision == 0
    finally:
        first.stop()


def test_a_lock_left_by_a_killed_process_does_not_block_a_restart(tmp_path):
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from agentmem_launcher import data_lock\n"
            "lock = data_lock.hold(Path(sys.argv[1]), '127.0.0.1:1'); print('held', flush=True)\n"
            "time.sleep(600)",
            str(data),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait(timeout=30)
    assert "127.0.0.1:1" in (data / "agentmem.lock").read_text()  # the file is still there
    up = Up(tmp_path, tmp_path, env=WORDS_ONLY)
    try:
        assert f"pid {up.proc.pid}" in (data / "agentmem.lock").read_text()
    finally:
        up.stop()


def test_private_data_is_its_owners_only_whatever_the_umask(tmp_path):
    before = os.umask(0o022)  # the usual umask: 0644 files, 0755 folders
    try:
        up = Up(tmp_path, tmp_path, env=WORDS_ONLY)
        try:
            with Client(up.address, up.token, retry=NO_RETRY) as client:
                client.insert_memory(content="I have a red kayak")
            export = tmp_path / "export.jsonl"
            with export.open("w") as out:  # as `agentmem export > export.jsonl` makes it
                subprocess.run(
                    [AGENTMEM, "export", "--addr", up.address],
                    env={**os.environ, "AGENTMEM_TOKEN": up.token},
                    stdout=out,
                    check=True,
                    timeout=60,
                )
        finally:
            up.stop()
    finally:
        os.umask(before)
    assert "red kayak" in export.read_text()
    made = [up.data, up.data / "logs", *up.data.rglob("*"), export]
    modes = {str(p.relative_to(tmp_path)): oct(p.stat().st_mode & 0o777) for p in made}
    assert {
        "data/agentmem.db",
        "data/logs/runtime.log",
        "data/dev-token",
        "data/agent-token",
    } <= set(modes)
    wrong = {
        name: mode
        for name, mode in modes.items()
        if mode != ("0o700" if (tmp_path / name).is_dir() else "0o600")
    }
    assert wrong == {}


def test_a_script_next_to_the_clone_imports_the_package(tmp_path):
    """A script in the folder that holds the clone (a folder named agentmem, as `git clone`
    names it) imports the installed package, not the clone's folder as an empty namespace
    package ("cannot import name 'Client' from 'agentmem' (unknown location)")."""
    (tmp_path / "agentmem").symlink_to(ROOT, target_is_directory=True)
    script = tmp_path / "remember.py"
    script.write_text("from agentmem import Client\nprint(Client.__module__)\n")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "agentmem.client.blocking"
