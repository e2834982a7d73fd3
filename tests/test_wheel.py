"""A wheel built from the repository installs into a fresh virtualenv outside the checkout
and runs `agentmem up` and `agentmem doctor`. Slow (it installs every dependency), so it
runs under `make wheel-test` (and CI), not in `make test`."""

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


@pytest.mark.timeout(1200)
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.pop("AGENTMEM_DEV_TOKEN", None)
    dist = tmp_path / "dist"
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "-w",
        str(dist),
        str(ROOT),
        cwd=tmp_path,
        env=env,
    )
    wheels = list(dist.glob("agentmem_service-*.whl"))
    assert len(wheels) == 1, list(dist.iterdir())
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path, env=env)
    bin_dir = venv / "bin"
    _run(str(bin_dir / "pip"), "install", "--quiet", f"{wheels[0]}[mcp]", cwd=tmp_path, env=env)
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
