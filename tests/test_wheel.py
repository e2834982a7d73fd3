"""The two wheels built from the repository (the client, client/; the service, the root)
install into a fresh virtualenv outside the checkout and run `agentmem up` and `agentmem
doctor`; the client's wheel alone installs without the servers' libraries and calls. Slow (it
installs every dependency), so it runs under `make wheel-test` (and CI), not in `make test`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import ROOT, wait_until

pytestmark = pytest.mark.skipif(
    os.environ.get("AGENTMEM_WHEEL_TEST") != "1", reason="slow: run with make wheel-test"
)


def _run(*args: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    result = subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def _wheels(dist: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """The client's wheel and the service's."""
    for project in (ROOT / "client", ROOT):
        _run(
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-w",
            str(dist),
            str(project),
            cwd=dist.parent,
            env=env,
        )
    client = list(dist.glob("agentmem_client-*.whl"))
    service = list(dist.glob("agentmem_service-*.whl"))
    assert len(client) == len(service) == 1, list(dist.iterdir())
    return client[0], service[0]


# What the servers need and a client does not.
SERVER_LIBRARIES = (
    "sqlalchemy",
    "alembic",
    "numpy",
    "torch",
    "tiktoken",
    "opentelemetry.sdk",
    "uvicorn",
    "agentmem_kernel",
    "runtime_svc",
    "protocol_svc",
)
CLIENT_ALONE = f"""
import importlib.util
import agentmem
from agentmem import AsyncClient, Client, NotFound
from agentmem.v1 import memory_service_pb2
from agentmem.app_server import methods
from agentmem.cli.main import parser
parser()
present = [m for m in {SERVER_LIBRARIES!r} if importlib.util.find_spec(m.split(".")[0])
           and importlib.util.find_spec(m)]
print("present:", present)
print(agentmem.__version__)
"""


@pytest.mark.timeout(1200)
def test_the_client_wheel_alone_has_no_server_libraries(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    client, _ = _wheels(tmp_path / "dist", env)
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path, env=env)
    bin_dir = venv / "bin"
    _run(str(bin_dir / "pip"), "install", "--quiet", str(client), cwd=tmp_path, env=env)
    out = _run(str(bin_dir / "python"), "-c", CLIENT_ALONE, cwd=tmp_path, env=env)
    assert "present: []" in out and "unknown" not in out, out
    up = subprocess.run(
        [str(bin_dir / "agentmem"), "up"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert up.returncode == 2 and "agentmem-service" in up.stderr, up.stderr


@pytest.mark.timeout(1200)
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.pop("AGENTMEM_DEV_TOKEN", None)
    client, service = _wheels(tmp_path / "dist", env)
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path, env=env)
    bin_dir = venv / "bin"
    _run(
        str(bin_dir / "pip"),
        "install",
        "--quiet",
        str(client),
        f"{service}[mcp]",
        cwd=tmp_path,
        env=env,
    )
    version = _run(str(bin_dir / "agentmem"), "--version", cwd=tmp_path, env=env)
    assert version.startswith("agentmem ") and "unknown" not in version
    # the installed package, not the checkout, is what runs
    where = _run(
        str(bin_dir / "python"),
        "-c",
        "import agentmem; print(agentmem.__file__)",
        cwd=tmp_path,
        env=env,
    )
    assert str(venv) in where

    data, port_file = tmp_path / "data", tmp_path / "port"
    up = subprocess.Popen(
        [
            str(bin_dir / "agentmem"),
            "up",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            str(data),
            "--port-file",
            str(port_file),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def serving() -> bool:  # the port file is written once the gateway serves
            assert up.poll() is None
            return port_file.exists()

        wait_until(serving, 120, "the gateway's port file")
        token = (data / "dev-token").read_text().strip()
        doctor = _run(
            str(bin_dir / "agentmem"),
            "doctor",
            cwd=tmp_path,
            env={
                **env,
                "AGENTMEM_ADDR": f"127.0.0.1:{port_file.read_text().strip()}",
                "AGENTMEM_TOKEN": token,
            },
            timeout=120,
        )
        assert "PROBLEM" not in doctor and "the audit chain verifies" in doctor
    finally:
        up.terminate()
        assert up.wait(timeout=60) == 0
