from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from agentmem_kernel import config
from tests import layers
from tests.harness import LoopThread, Stack, base_settings
from tests.hybrid_support import (  # noqa: F401 (fixtures)
    local_model,
    pgvector_url,
    vector_backend,
)
from tests.pg_leftovers import drop_leftovers

# Property tests assert what holds, never how long an example took: a loaded machine (CI, two
# cores) must not fail one on Hypothesis's per-example deadline.
hypothesis_settings.register_profile("agentmem", deadline=None)
hypothesis_settings.load_profile("agentmem")


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
        stack = Stack(loop_thread, settings, db, span_exporter=span_exporter)
        stacks.append(stack)  # stopped (and its database dropped) even if it fails to start
        return stack.start()

    yield make
    failures = []
    for s in stacks:  # every one, even after one failed to stop
        try:
            s.stop()
        except Exception as e:
            failures.append(e)
    if failures:
        raise failures[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Says which test runs, so that nothing starts a server for a fast-layer test
    (`tests.layers`)."""
    with layers.running(item.path, item.name):
        return (yield)


def pytest_sessionstart(session: pytest.Session) -> None:
    """With PostgreSQL: databases earlier runs of this suite left behind (killed before
    they could drop them) are dropped, if old and unused (`tests.pg_leftovers`)."""
    server = os.environ.get("AGENTMEM_TEST_DATABASE_URL")
    if server:
        dropped = drop_leftovers(server)
        if dropped:
            print(f"dropped {len(dropped)} test database(s) left by earlier runs")


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack()
