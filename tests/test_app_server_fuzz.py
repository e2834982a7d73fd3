"""The bridge under random input: every method with params made of random JSON values,
random Unicode (lone surrogates and non-characters included) and integers at and past
every bound, and random lines that are no message at all. Whatever comes in, the answer is
the client's error or a result: never -32603, never an error-level log line or a
traceback, and the connection stays open."""

from __future__ import annotations

import enum
import json
import os
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentmem.app_server.methods import METHODS
from agentmem_kernel import config
from tests.app_server_support import StdioHost
from tests.harness import ADMIN_A, Stack, base_settings

EXAMPLES = int(os.environ.get("AGENTMEM_FUZZ_EXAMPLES", "60"))
BOUNDS = [
    edge + delta
    for edge in (0, 2**31, 2**32, 2**53, 2**63, 2**64, -(2**31), -(2**63))
    for delta in (-1, 0, 1)
]
NON_CHARACTERS = ["\ufffe", "\uffff", "\ufdd0", "\U0001fffe", "\U0010ffff", "\ufeff", "\x00"]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]

characters = st.characters(exclude_categories=())  # surrogates (Cs) included
text = st.one_of(
    st.text(characters, max_size=40),
    st.lists(st.sampled_from(NON_CHARACTERS + SURROGATES + ["a", " "]), max_size=8).map("".join),
)
integers = st.one_of(st.sampled_from(BOUNDS), st.integers())
scalars = st.one_of(st.none(), st.booleans(), integers, st.floats(allow_nan=False), text)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)


def typed(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a params field's own type, at and past its bounds, or any JSON value."""
    kinds = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    kind = typing.get_origin(kinds[0]) or kinds[0]
    if kind is typing.Annotated:
        kind = typing.get_args(kinds[0])[0]
    if kind is str:
        return st.one_of(text, text, text, values)
    if kind is int:
        return st.one_of(integers, integers, integers, values)
    if kind is bool:
        return st.one_of(st.booleans(), st.booleans(), values)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return st.one_of(st.sampled_from([m.value for m in kind]), text)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return st.one_of(params_of(kind), values)
    return values


def params_of(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Params of `model`: its required fields, the others or not, each with a value of its
    type (mostly)."""
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    return st.fixed_dictionaries(
        {name: typed(f.annotation) for name, f in fields.items() if f.is_required()},
        optional={name: typed(f.annotation) for name, f in fields.items() if not f.is_required()},
    )


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, Any]:
    method = draw(st.sampled_from(sorted(METHODS)))
    params = draw(params_of(METHODS[method].params))
    if draw(st.integers(0, 3)) == 0:  # a member the bridge does not know
        params.update(draw(st.dictionaries(text, values, max_size=1)))
    return method, params if draw(st.integers(0, 7)) else draw(values)


@pytest.fixture(scope="module")
def host(loop_thread, tmp_path_factory):
    db = tmp_path_factory.mktemp("app-server-fuzz") / "agentmem.db"
    stack = Stack(loop_thread, config.load(None, base_settings(db)), db).start()
    bridge = StdioHost(stack.address, ADMIN_A.token, tmp_path_factory.mktemp("bridge"))
    bridge.initialize()
    yield bridge
    assert bridge.close() == 0
    log = bridge.stderr
    assert "Traceback" not in log and '"level": "error"' not in log, log[-2000:]
    stack.stop()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=requests(), junk=st.one_of(st.none(), values))
def test_random_requests_get_a_result_or_a_client_error(host, request, junk):
    method, params = request
    # a line that is a JSON value but no message: never answered
    if junk is not None and not (isinstance(junk, dict) and ("id" in junk or "method" in junk)):
        host.write(json.dumps(junk))
    answer = host.call(method, params)
    if "error" in answer:
        error = answer["error"]
        assert error["code"] in (-32600, -32602), (method, error)
        assert error.get("data", {}).get("reason"), (method, error)
    else:
        assert "result" in answer
