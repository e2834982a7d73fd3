"""The Python client as a library user meets it: the public names in `dir(agentmem)`, every
method typed and documented, `AsyncClient`'s methods real coroutines (generated, checked in,
never stale), bad values refused by the client itself, and errors that say what failed."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys

import pytest

import agentmem
from agentmem.client import AsyncClient, Client
from tests.harness import ADMIN_A, EXPERIMENTAL, ROOT

PUBLIC = ("Client", "AsyncClient", "ApiError", "NotFound", "InvalidArgument", "RevisionMismatch")


def methods(cls: type) -> dict[str, object]:
    return {
        name: fn
        for name, fn in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and name not in ("with_token", "close", "metadata")
    }


def test_the_public_names_are_exported():
    for name in PUBLIC:
        assert name in agentmem.__all__ and name in dir(agentmem), name
        assert getattr(agentmem, name).__name__ == name
    assert issubclass(agentmem.NotFound, agentmem.ApiError)
    assert "Any" not in dir(agentmem)


def test_every_method_is_typed_documented_and_async_where_it_should_be():
    sync, asynchronous = methods(Client), methods(AsyncClient)
    assert set(sync) == set(asynchronous) and len(sync) > 25
    for name, fn in sync.items():
        assert inspect.getdoc(fn), f"Client.{name} has no docstring"
        hints = inspect.signature(fn)
        assert hints.return_annotation not in (inspect.Signature.empty, "Any"), name
        other = asynchronous[name]
        if name == "watch":
            continue
        assert inspect.iscoroutinefunction(other), f"AsyncClient.{name} is not a coroutine"
        assert inspect.getdoc(other) == inspect.getdoc(fn)
        assert inspect.signature(other) == hints, name


def test_the_generated_async_methods_are_current():
    done = subprocess.run(
        [sys.executable, "scripts/gen_async_client.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_value_raises_the_clients_own_invalid_argument(stack):
    client = stack.client()
    saved = client.insert_memory(content="I have a red kayak")
    with pytest.raises(agentmem.InvalidArgument) as e:
        client.set_source_classification(
            source_id=saved.source_id, classification="frozen", expected_revision=1
        )
    assert "classification" in str(e.value) and "active, cold" in str(e.value)
    assert e.value.violations == (("classification", "must be one of: active, cold"),)
    assert client.get_source(source_id=saved.source_id).revision == 1  # nothing was sent
    with pytest.raises(agentmem.InvalidArgument, match="mode must be one of: enabled, disabled"):
        client.set_thread_memory_mode(thread_id="t", mode="paused", expected_revision=0)


def test_errors_say_what_failed(stack):
    client = stack.client()
    with pytest.raises(agentmem.NotFound) as e:
        client.get_source(source_id="src_missing")
    assert str(e.value) == "NOT_FOUND: source src_missing was not found"
    saved = client.insert_memory(content="I have a red kayak")
    with pytest.raises(agentmem.RevisionMismatch) as stale:
        client.set_source_classification(
            source_id=saved.source_id, classification="cold", expected_revision=7
        )
    assert "current revision is 1" in str(stale.value)
    with pytest.raises(agentmem.InvalidArgument) as bad:
        client.search_memories(query="kayak", limit=100_000)
    assert "limit" in str(bad.value)


def test_the_async_client_awaits_every_call(stack):
    async def run() -> tuple[str, list[str]]:
        async with AsyncClient(stack.address, ADMIN_A.token, experimental=EXPERIMENTAL) as c:
            saved = await c.insert_memory(content="I have a red kayak")
            hits = (await c.search_memories(query="kayak")).hits
            return saved.source_id, [h.source_id for h in hits]

    source_id, hits = asyncio.run(run())
    assert hits == [source_id]
