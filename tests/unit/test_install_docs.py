"""What README and docs say about installing is true: the distribution is not on the package
index, so no page tells a user to install it by name; `make install` takes torch's CPU
build unless asked otherwise."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BY_NAME = re.compile(r"(pipx|uv tool|uv pip|pip) install [^\n`]*agentmem-service")


def test_no_page_installs_the_unpublished_distribution_by_name():
    found = [(p.name, m.group(0)) for p in PAGES for m in BY_NAME.finditer(p.read_text())]
    assert found == []


def test_make_install_takes_torchs_cpu_build_by_default():
    makefile = (ROOT / "Makefile").read_text()
    assert "TORCH_INDEX ?= https://download.pytorch.org/whl/cpu" in makefile
    assert '"torch==$(TORCH_VERSION)+cpu"' in makefile


def test_make_clean_keeps_the_data_and_clean_data_deletes_it():
    import subprocess

    def recipe(target: str) -> str:
        done = subprocess.run(
            ["make", "--no-print-directory", "-n", target],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "data" not in recipe("clean").replace("pytest_cache", "")
    assert recipe("clean-data").split() == ["rm", "-rf", "./data"]
