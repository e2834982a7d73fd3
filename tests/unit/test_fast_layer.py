"""The fast layer (`make check`: tests/unit, tests/retrieval, tests/service) starts no server:
a stack, a service process or a PostgreSQL server asked for by one of its tests refuses to
start, so `make check` leaves nothing running. Tests that need one live in tests/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import Process, Stack
from tests.hybrid_support import pgvector_server
from tests.layers import ServerInFastLayer, layer_of


def test_the_layers_are_read_from_the_test_path() -> None:
    assert layer_of("tests/unit/test_fast_layer.py") == "unit"
    assert layer_of("tests/retrieval/test_take.py") == "retrieval"
    assert layer_of("tests/test_appends.py") == "stack"
    assert layer_of("tests/faults/test_up.py") == "faults"
    assert layer_of(Path(__file__)) == "unit"


def test_no_server_starts_in_the_fast_layer(tmp_path) -> None:
    with pytest.raises(ServerInFastLayer, match=r"tests/unit/test_fast_layer\.py::test_no_server"):
        Stack(None, None, tmp_path / "never.db").start()  # type: ignore[arg-type]  # never used
    with pytest.raises(ServerInFastLayer), pgvector_server():
        pass
    with pytest.raises(ServerInFastLayer):
        Process(["runtime"], {}, tmp_path, "runtime")
