"""A guard, not the rule: no module of the service over 500 lines. The rule is cohesion (one
idea per module, docs/development.md): a module is split where it holds two ideas, and two
modules that are one idea are one module, whatever their length. A module that reaches the
guard holds more than one idea. Generated code (`*_pb2*.py`) and database migrations are
left out."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["agentmem", "agentmem_kernel", "agentmem_launcher", "runtime_svc", "protocol_svc"]
MAX_LINES = 500


def _counted(path: Path) -> bool:
    return "_pb2" not in path.name and "migrations/versions" not in path.as_posix()


def test_no_module_is_over_the_limit() -> None:
    over = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if _counted(path) and (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not over, f"modules over {MAX_LINES} lines (split where the ideas part): {over}"


def test_the_packages_are_found() -> None:
    for package in PACKAGES:
        assert (ROOT / package / "__init__.py").is_file(), package
