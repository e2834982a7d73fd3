"""The service tier: the runtime's use cases as its composition root wires them
(`runtime_svc.composition.use_cases`, the call the runtime makes), called directly, without
gRPC. Each test gets a fresh database migrated as the runtime migrates it: a SQLite file, or
with AGENTMEM_TEST_DATABASE_URL a new database on that PostgreSQL server.

A rule of the runtime (lifecycle, insert policy, thread mode, facts over time) is tested
here; what only the wire shows (status details, metadata, auth, streaming, faults) stays in
the stack tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runtime_svc.composition import UseCases
from tests.service.wiring import Service, start


@pytest.fixture
def make_service(tmp_path: Path) -> Iterator[Callable[..., Service]]:
    made: list[Service] = []

    def make(**overrides: Any) -> Service:
        service = start(tmp_path / f"agentmem-{len(made)}.db", **overrides)
        made.append(service)
        return service

    yield make
    for s in made:
        s.close()


@pytest.fixture
def service(make_service: Callable[..., Service]) -> UseCases:
    return make_service().cases
