"""A real browser for tests: Debian's chromium driven by Playwright (never a downloaded build).

Where chromium is not installed the browser tests skip with a message saying how to
install it, except in CI (CI=true), where they fail: CI installs it (.ci/run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("AGENTMEM_TEST_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT = Path(__file__).resolve().parent / "output"


def _unavailable(why: str) -> None:
    message = f"{why}; install Debian's chromium: apt-get update && apt-get install -y chromium"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run in CI: {message}")
    pytest.skip(message)


def browser() -> Iterator[Any]:
    """A chromium for one test module (use as a module-scoped fixture body)."""
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (make install)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def axe_violations(page: Any, impacts: frozenset[str] = frozenset({"serious", "critical"})) -> list:
    """axe-core's violations on the page at or above the given impacts."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in results.response["violations"]
        if v["impact"] in impacts
    ]
