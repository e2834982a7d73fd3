from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmem.core import config
from tests.harness import LoopThread, Stack, base_settings
from tests.hybrid_support import (  # noqa: F401 (fixtures)
    local_model,
    pgvector_url,
    vector_backend,
)


@pytest.fixture(scope="session")
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    yield lt
    lt.close()


@pytest.fixture
def make_stack(loop_thread: LoopThread, tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    """Starts a fresh runtime + gateway pair; keyword overrides are dotted config keys."""
    stacks: list[Stack] = []

    def make(span_exporter: Any = None, **overrides: Any) -> Stack:
        db = tmp_path / f"agentmem-{len(stacks)}.db"
        flat = {k.replace("__", "."): v for k, v in overrides.items()}
        settings = config.load(None, base_settings(db, **flat))
        stack = Stack(loop_thread, settings, db, span_exporter=span_exporter).start()
        stacks.append(stack)
        return stack

    yield make
    for s in stacks:
        s.stop()


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack()
