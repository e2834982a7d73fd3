"""`make install` (and so `make run`) hides setuptools' editable-install notice, and only it:
other warnings and errors of the install still show."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _editable_installs() -> list[str]:
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    dry = subprocess.run(  # the install recipe's commands, as make would run them
        ["make", "-n", "-W", "pyproject.toml", "install"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in dry.splitlines() if "pip install" in line and " -e " in line]


def _assignment(line: str) -> str:
    """`PYTHONWARNINGS="…"` of `PYTHONWARNINGS="…" .venv/bin/pip install …`."""
    return line[: line.index("pip install")].rsplit(" ", 1)[0]


def test_every_editable_install_filters_the_notice_and_nothing_else() -> None:
    lines = _editable_installs()
    assert len(lines) == 2, lines
    for line in lines:
        first = shlex.split(line)[0]
        assert first.startswith("PYTHONWARNINGS="), line
        assert "ignore:Editable installation" in first, line
        assert "2>" not in line and "/dev/null" not in line, line  # errors stay visible


def test_the_filter_drops_the_notice_only() -> None:
    line = _editable_installs()[0]
    setting = subprocess.run(  # the shell's expansion of the recipe's PYTHONWARNINGS
        ["sh", "-c", f'export {_assignment(line)}; printf %s "$PYTHONWARNINGS"'],
        env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    code = (
        "import warnings\n"
        "warnings.warn('Editable installation.\\n!!\\nPlease be careful', UserWarning)\n"
        "warnings.warn('a real problem', UserWarning)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONWARNINGS": setting},
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    assert "Editable installation" not in shown
    assert "a real problem" in shown
