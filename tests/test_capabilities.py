"""Every capability switch: on, off, experimental without and with the client's opt-in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentmem.client import Client, errors
from agentmem_kernel.config import CAPABILITIES
from tests.test_foreign import OWNER, POINTER


def _watch_one(c: Client) -> Any:
    c.insert_memory(content="an event to watch")
    stream = c.watch(after_sequence=0)
    try:
        return next(stream)
    finally:
        stream.close()


CALLS: dict[str, Callable[[Client], Any]] = {
    "thread_memory_mode": lambda c: c.read_thread_memory_mode(thread_id="t1"),
    "source_policy": lambda c: c.list_sources(),
    "retrieval_explain": lambda c: c.explain_retrieval(query="tea"),
    "save_intent": lambda c: c.list_memories(),
    "facts": lambda c: c.get_profile(),
    "foreign_sources": lambda c: c.prepare_foreign_source(
        canonical_owner=OWNER,
        pointer={
            "uri": POINTER.uri,
            "content_digest": POINTER.content_digest,
            "media_type": POINTER.media_type,
        },
    ),
    "events": _watch_one,
}


def test_every_capability_has_a_probe():
    assert set(CALLS) == set(CAPABILITIES)


@pytest.mark.parametrize("state", ["on", "off", "experimental"])
def test_capability_switches(make_stack, state):
    stack = make_stack(**{f"capabilities__{name}": state for name in CAPABILITIES})
    without = stack.client(experimental=())
    with_opt_in = stack.client(experimental=CAPABILITIES)
    for name, call in CALLS.items():
        if state == "off":
            for c in (without, with_opt_in):
                with pytest.raises(errors.CapabilityDisabled) as e:
                    call(c)
                assert e.value.capability == name
        elif state == "experimental":
            with pytest.raises(errors.ExperimentalNotEnabled) as e:
                call(without)
            assert e.value.capability == name and e.value.metadata["opt_in"] == (
                "agentmem-experimental"
            )
            call(with_opt_in)
        else:
            call(without)
            call(with_opt_in)

    reported = {c.name: c for c in with_opt_in.get_capabilities().capabilities}
    # hybrid_retrieval is reported by the runtime (is a vector store there?), not switched.
    assert not reported.pop("hybrid_retrieval").enabled
    caps = {n: c for n, c in reported.items() if n in CAPABILITIES}
    assert set(caps) == set(CAPABILITIES)
    assert {c.enabled for c in caps.values()} == {state != "off"}
    assert {c.experimental for c in caps.values()} == {state == "experimental"}
    assert {c.opted_in for c in caps.values()} == {state == "experimental"}
    report = without.get_capabilities()
    assert report.experimental_opt_in == "agentmem-experimental"
    assert not any(c.opted_in for c in report.capabilities)


def test_foreign_sources_are_experimental_by_default(stack):
    caps = {c.name: c for c in stack.client().get_capabilities().capabilities}
    assert caps["foreign_sources"].experimental and caps["foreign_sources"].enabled
    assert [n for n, c in caps.items() if c.experimental] == ["foreign_sources"]
    with pytest.raises(errors.ExperimentalNotEnabled):
        CALLS["foreign_sources"](stack.client(experimental=()))
    # a bad opt-in entry names nothing and so opts in to nothing
    with pytest.raises(errors.ExperimentalNotEnabled):
        CALLS["foreign_sources"](stack.client(experimental=("", "facts")))
    CALLS["foreign_sources"](stack.client(experimental=("facts", "foreign_sources")))


def test_config_accepts_booleans_and_states(make_stack):
    from agentmem_kernel import config

    s = config.load(None, {"capabilities.facts": False, "capabilities.events": "experimental"})
    assert s.capabilities.facts is config.CapabilityState.OFF
    assert s.capabilities.events is config.CapabilityState.EXPERIMENTAL
    with pytest.raises(config.ConfigError):
        config.load(None, {"capabilities.facts": "sometimes"})
