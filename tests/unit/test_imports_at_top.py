"""numpy and the benchmark modules are imported at the top of a module, not inside its
functions: an import inside a function hid an import cycle between benchmarks
(`bench/common.py` holds what they share), and repeated numpy's import in every call."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["runtime_svc", "protocol_svc", "bench"]


def _inner_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            names = []
            if isinstance(inner, ast.Import):
                names = [a.name for a in inner.names]
            elif isinstance(inner, ast.ImportFrom) and inner.module:
                names = [inner.module]
            for name in names:
                if name.split(".")[0] in ("numpy", "bench"):
                    found.append(f"{path.relative_to(ROOT)}:{inner.lineno} {name}")
    return found


def test_numpy_and_benchmarks_are_imported_at_module_top() -> None:
    inner = [
        hit
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "_pb2" not in path.name
        for hit in _inner_imports(path)
    ]
    assert not inner, inner
