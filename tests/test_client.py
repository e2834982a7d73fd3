"""The typed Python client through real servers: typed errors, retries, resumable watch,
settings from the environment, the async twin."""

from __future__ import annotations

import asyncio
import threading

import grpc
import pytest

import agentmem
from agentmem.client import NO_RETRY, AsyncClient, Client, RetryPolicy, errors
from agentmem.client.methods import IDEMPOTENT
from protocol_svc.policy import POLICY, SERVICE
from tests.harness import ADMIN_A, READER_A, free_port


def test_typed_errors_carry_what_callers_need(stack):
    c = stack.client()
    c.set_thread_memory_mode(thread_id="t1", mode="disabled", expected_revision=0)
    with pytest.raises(errors.RevisionMismatch) as e:
        c.set_thread_memory_mode(thread_id="t1", mode="enabled", expected_revision=0)
    assert e.value.current_revision == 1 and e.value.reason == "REVISION_MISMATCH"
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION  # still a grpc.RpcError
    assert "current revision is 1" in e.value.explain()

    with pytest.raises(errors.NotFound) as nf:
        c.get_source(source_id="src_missing")
    assert "source src_missing was not found" in nf.value.explain()

    with pytest.raises(errors.MissingScope) as denied:
        stack.client(READER_A).set_thread_memory_mode(
            thread_id="t2", mode="disabled", expected_revision=0
        )
    assert denied.value.scope == "memory.policy"
    assert isinstance(denied.value, errors.PermissionDenied)

    with pytest.raises(errors.Unauthenticated):
        stack.client(token="nope").get_capabilities()

    c.set_insert_policy(insert_policy="require_save_intent", expected_revision=0)
    with pytest.raises(errors.SaveIntentRequired) as required:
        c.insert_memory(content="my secret diary entry")
    assert "secret" not in str(required.value)
    with pytest.raises(errors.SaveIntentInvalid):
        c.insert_memory(content="x", save_intent="because")
    saved = c.insert_memory(content="I like tea", save_intent="explicit_user_request")
    assert saved.status == 1 and saved.source_id.startswith("src_")
    with pytest.raises(errors.ThreadMemoryDisabled):
        c.insert_memory(content="tea", save_intent="user_confirmed", thread_id="t1")
    with pytest.raises(errors.InvalidArgument) as bad:
        c.search_memories(query="tea", limit=-1)
    assert bad.value.violations and bad.value.violations[0][0] == "limit"


def test_every_rpc_has_a_method_and_idempotency_matches_the_gateway():
    for method in SERVICE.methods:
        snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in method.name)[1:]
        assert method.name == "WatchEvents" or hasattr(Client, snake), snake
        rule = POLICY[f"/{SERVICE.full_name}/{method.name}"]
        assert (method.name in IDEMPOTENT) == rule.idempotent, method.name


def test_idempotent_calls_and_keyed_inserts_are_retried_until_the_gateway_answers(make_stack):
    stack = make_stack()
    port = free_port()
    started: list = []

    def bring_up_gateway(_state) -> None:  # before the first wait: start a gateway there
        if not started:
            from protocol_svc import app as gateway_app

            started.append(
                stack.loop.run(
                    gateway_app.start(
                        stack.settings,
                        listen=f"127.0.0.1:{port}",
                        runtime_address=stack.runtime_address,
                    )
                )
            )

    policy = RetryPolicy(attempts=100, initial=0.05, maximum=0.2, deadline=30, before_sleep=None)
    # A non-idempotent call is never retried: the first UNAVAILABLE is raised.
    with (
        Client(f"127.0.0.1:{port}", ADMIN_A.token, retry=policy) as c,
        pytest.raises(errors.Unavailable),
    ):
        c.insert_memory(content="no request id, no retry")
    retrying = RetryPolicy(
        attempts=100, initial=0.05, maximum=0.2, deadline=30, before_sleep=bring_up_gateway
    )
    try:
        with Client(f"127.0.0.1:{port}", ADMIN_A.token, retry=retrying) as c:
            assert c.read_thread_memory_mode(thread_id="t1").revision == 0
            assert started  # the first attempt failed and was retried
        started.clear()
        stack.loop.run(stack.gateway.stop())
        stack.gateway = None
        with Client(f"127.0.0.1:{port}", ADMIN_A.token, retry=retrying) as c:
            c.insert_memory(content="keyed insert", request_id="r-1")
            assert c.insert_memory(content="keyed insert", request_id="r-1").deduplicated
        assert started
    finally:
        for served in started:
            stack.loop.run(served.stop())


def test_watch_resumes_across_a_gateway_restart_without_gaps_or_duplicates(make_stack):
    stack = make_stack()
    writer = stack.client()
    for i in range(3):
        writer.set_thread_memory_mode(thread_id=f"a{i}", mode="disabled", expected_revision=0)
    port = stack.gateway.port
    seen: list[int] = []
    three, six = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def consume() -> None:
        try:
            with Client(
                stack.address, ADMIN_A.token, retry=RetryPolicy(initial=0.05, deadline=30)
            ) as c:
                for event in c.watch(after_sequence=0):
                    seen.append(event.sequence)
                    if len(seen) == 3:
                        three.set()
                    if len(seen) == 6:
                        six.set()
                        return
        except BaseException as e:  # reported by the test thread
            failure.append(e)
            three.set()
            six.set()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    assert three.wait(30)
    from protocol_svc import app as gateway_app

    stack.loop.run(stack.gateway.stop())  # the stream breaks
    stack.gateway = stack.loop.run(
        gateway_app.start(
            stack.settings, listen=f"127.0.0.1:{port}", runtime_address=stack.runtime_address
        )
    )
    for i in range(3):
        writer.set_thread_memory_mode(thread_id=f"b{i}", mode="disabled", expected_revision=0)
    assert six.wait(60), seen
    thread.join(10)
    assert not failure, failure
    assert seen == [1, 2, 3, 4, 5, 6]


def test_settings_come_from_the_environment(stack, monkeypatch):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    monkeypatch.setenv("AGENTMEM_EXPERIMENTAL", "foreign_sources")
    with agentmem.Client(retry=NO_RETRY) as c:
        caps = {x.name: x for x in c.get_capabilities().capabilities}
        assert caps["foreign_sources"].opted_in
    monkeypatch.delenv("AGENTMEM_EXPERIMENTAL")
    with agentmem.Client(retry=NO_RETRY) as c:
        assert c.metadata() == (("authorization", f"Bearer {ADMIN_A.token}"),)
        with pytest.raises(errors.ExperimentalNotEnabled) as e:
            c.prepare_foreign_source(
                canonical_owner="owner", pointer={"uri": "https://x", "media_type": "text/plain"}
            )
        assert e.value.capability == "foreign_sources"
        assert "--experimental foreign_sources" in e.value.explain()


def test_tls_settings(monkeypatch, tmp_path):
    monkeypatch.delenv("AGENTMEM_CA_FILE", raising=False)
    monkeypatch.delenv("AGENTMEM_TLS", raising=False)
    assert Client("127.0.0.1:1", "t").settings.credentials is None
    monkeypatch.setenv("AGENTMEM_TLS", "1")
    assert Client("127.0.0.1:1", "t").settings.credentials is not None
    monkeypatch.delenv("AGENTMEM_TLS")
    assert Client("127.0.0.1:1", "t", tls=True).settings.credentials is not None


def test_async_client(stack):
    async def main() -> None:
        async with AsyncClient(stack.address, ADMIN_A.token, retry=NO_RETRY, experimental=()) as c:
            r = await c.set_thread_memory_mode(thread_id="t", mode="disabled", expected_revision=0)
            assert r.revision == 1
            with pytest.raises(errors.RevisionMismatch) as e:
                await c.set_thread_memory_mode(thread_id="t", mode="enabled", expected_revision=0)
            assert e.value.current_revision == 1
            other = c.with_token(READER_A.token)
            assert (await other.read_thread_memory_mode(thread_id="t")).revision == 1
            with pytest.raises(errors.MissingScope):
                await other.set_thread_memory_mode(
                    thread_id="t", mode="enabled", expected_revision=1
                )
            events = []
            async for event in c.watch(after_sequence=0):
                events.append(event.sequence)
                break
            assert events == [1]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_keyed_appends_are_retried_like_keyed_inserts():
    from agentmem.v1 import sources_pb2

    policy = RetryPolicy(attempts=3, initial=0.05, maximum=0.2, deadline=5, before_sleep=None)
    with Client("127.0.0.1:1", ADMIN_A.token, retry=policy) as c:
        for name, request in (
            ("AppendMessages", sources_pb2.AppendMessagesRequest),
            ("InsertMemory", sources_pb2.InsertMemoryRequest),
        ):
            assert c._retried(name, request(request_id="turn-1"))
            assert not c._retried(name, request())
