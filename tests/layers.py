"""The suite's layers, read from a test's path, and the fast layer's rule: `make check`
(tests/unit, tests/retrieval, tests/service) starts no server. Whatever starts one (a stack,
a service process, a PostgreSQL server) calls `no_server_here` first, which refuses while a
test of the fast layer runs (its setup, call and teardown; `tests/conftest.py` says which
test runs), so such a test fails at once instead of leaving a process behind."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FAST_LAYER = frozenset({"unit", "retrieval", "service"})

_running: list[str] = []  # the fast-layer test running now, if one is


class ServerInFastLayer(RuntimeError):
    pass


def layer_of(path: str | Path) -> str:
    """`unit`, `retrieval`, `service`, `faults`, ... for a test under that folder of tests/;
    `stack` for one directly in tests/."""
    given = Path(path)
    relative = given.resolve().relative_to(TESTS) if given.is_absolute() else given
    parts = relative.parts[1:] if relative.parts[0] == "tests" else relative.parts
    return parts[0] if len(parts) > 1 else "stack"


@contextlib.contextmanager
def running(path: Path, name: str) -> Iterator[None]:
    """While the test `name` at `path` runs."""
    fast = layer_of(path) in FAST_LAYER
    if fast:
        _running.append(f"{path.relative_to(TESTS.parent)}::{name}")
    try:
        yield
    finally:
        if fast:
            _running.pop()


def no_server_here(what: str) -> None:
    """Refuses to start `what` during a fast-layer test."""
    if _running:
        raise ServerInFastLayer(
            f"{_running[-1]} would start {what}: tests under tests/unit, tests/retrieval and "
            "tests/service start no server (make check); a test that needs one goes in tests/"
        )
