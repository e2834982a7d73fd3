"""Prometheus metrics on each process's plaintext metrics port (`*.metrics_listen`): per-RPC
counters and histograms by method and status code, retrieval, group commit, watchers and
the database pool; label values from fixed sets only (no tenant, principal, token or text)."""

from __future__ import annotations

import re
import urllib.request

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentmem.contract.rpcs import SERVICE
from agentmem.v1 import events_pb2
from agentmem_kernel import config
from tests.harness import ADMIN_A, KEYS, Key
from tests.memory_helpers import assemble, insert, search

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,80}")

PUBLIC = "agentmem.v1.MemoryService"
SECRET_TEXT = "quixotic zebrafish marmalade 7f3a9c"
# Names that cannot occur in metric text by chance.
WRITER_Q = Key("tok-qv7-writer-credential", "principal-qv7w", "tenant-qv7a", config.SCOPES)
READER_Q = Key("tok-qv7-reader-credential", "principal-qv7r", "tenant-qv7a", ("memory.read",))
OTHER_Q = Key("tok-qv7-other-credential", "principal-qv7o", "tenant-qv7b", config.SCOPES)


@pytest.fixture
def observed(make_stack):
    return make_stack(
        gateway__metrics_listen="127.0.0.1:0",
        runtime__metrics_listen="127.0.0.1:0",
        auth__api_keys=[k.config() for k in (*KEYS, WRITER_Q, READER_Q, OTHER_Q)],
    )


def scrape_text(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.status == 200
        return r.read().decode()


def samples(port: int) -> list:
    return [s for f in text_string_to_metric_families(scrape_text(port)) for s in f.samples]


def value(port: int, name: str, **labels: str) -> float:
    return sum(
        s.value
        for s in samples(port)
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def test_per_rpc_counters_and_histograms_move_with_calls(observed):
    """Both servers serve the public service (the runtime on its internal port); here they
    run in one process, so each port shows one registry: an accepted call counts twice (the
    gateway's and the runtime's), a refused one once (the gateway's)."""
    gw, rt = observed.gateway.metrics_port, observed.runtime.metrics_port
    assert gw and rt and gw != rt
    ins = {"grpc_service": PUBLIC, "grpc_method": "InsertMemory", "grpc_type": "unary"}
    handled_before = value(gw, "grpc_server_handled_total", grpc_code="OK", **ins)
    seconds_before = value(gw, "grpc_server_handling_seconds_count", grpc_code="OK", **ins)
    denied_before = value(
        gw, "grpc_server_handled_total", grpc_code="UNAUTHENTICATED", grpc_method="InsertMemory"
    )
    client = observed.client(ADMIN_A)
    for i in range(3):
        insert(client, f"memory number {i}")
    with pytest.raises(grpc.RpcError):
        insert(observed.client(token="not-a-key"), "x")

    for port in (gw, rt):
        assert value(port, "grpc_server_handled_total", grpc_code="OK", **ins) == (
            handled_before + 2 * 3
        )
        assert value(port, "grpc_server_handling_seconds_count", grpc_code="OK", **ins) == (
            seconds_before + 2 * 3
        )
        assert value(
            port,
            "grpc_server_handled_total",
            grpc_code="UNAUTHENTICATED",
            grpc_method="InsertMemory",
        ) == (denied_before + 1)
    assert value(gw, "grpc_server_started_total", **ins) >= 6


def test_retrieval_and_group_commit_metrics_move(observed):
    rt = observed.runtime.metrics_port
    client = observed.client(ADMIN_A)
    search_before = value(rt, "agentmem_retrieval_seconds_count", operation="search")
    prompt_before = value(rt, "agentmem_retrieval_seconds_count", operation="prompt")
    batches_before = value(rt, "agentmem_group_commit_batch_size_count")
    waits_before = value(rt, "agentmem_group_commit_wait_seconds_count")
    insert(client, "the user plays a yellow guitar")
    search(client, "guitar")
    assemble(client, "guitar")
    assert value(rt, "agentmem_retrieval_seconds_count", operation="search") == search_before + 1
    assert value(rt, "agentmem_retrieval_seconds_count", operation="prompt") == prompt_before + 1
    assert value(rt, "agentmem_group_commit_batch_size_count") > batches_before
    assert value(rt, "agentmem_group_commit_wait_seconds_count") > waits_before
    assert value(rt, "agentmem_db_pool_capacity", role="writer") > 0
    names = {s.name for s in samples(rt)}
    assert {"agentmem_db_pool_in_use", "agentmem_db_work_waiting"} <= names


def test_watch_lag_and_watchers_are_measured(observed):
    gw, rt = observed.gateway.metrics_port, observed.runtime.metrics_port
    client = observed.client(ADMIN_A)
    for i in range(3):
        insert(client, f"event source {i}")
    lag_before = value(rt, "agentmem_watch_lag_events_count")
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
    first = next(stream)
    assert first.event.sequence == 1
    assert value(gw, "agentmem_watchers") >= 1
    assert value(rt, "agentmem_watch_lag_events_count") > lag_before
    # The first read found the three inserts' events ahead of position 0.
    assert value(rt, "agentmem_watch_lag_events_sum") >= 3
    stream.cancel()


def test_label_values_never_carry_tenants_principals_tokens_or_text(observed):
    gw, rt = observed.gateway.metrics_port, observed.runtime.metrics_port
    for key in (WRITER_Q, OTHER_Q):
        insert(observed.client(key), SECRET_TEXT, thread_id="thread-secret-42")
        search(observed.client(key), SECRET_TEXT)
    with pytest.raises(grpc.RpcError):
        insert(observed.client(READER_Q), SECRET_TEXT)
    with pytest.raises(grpc.RpcError):
        search(observed.client(token="tok-bogus-credential"), SECRET_TEXT)

    keys = (WRITER_Q, READER_Q, OTHER_Q)
    forbidden = [
        "qv7",  # in every tenant id, principal id and token used here
        *(k.tenant for k in keys),
        *(k.principal for k in keys),
        *(k.token for k in keys),
        "tok-bogus-credential",
        "thread-secret-42",
        "zebrafish",
        "marmalade",
    ]
    methods = {m.name for m in SERVICE.methods}
    allowed_labels = {
        "grpc_type": {"unary", "server_stream"},
        "grpc_service": {PUBLIC},
        "grpc_method": methods,
        "grpc_code": {c.name for c in grpc.StatusCode},
        "operation": {"search", "prompt", "explain"},
        "role": {"writer", "reader"},
        "dialect": {"sqlite", "postgresql"},
        "limit": {
            "requests_per_second_per_tenant",
            "requests_per_second_per_principal",
            "watches_per_tenant",
            "failed_auth_per_second_per_peer",
        },
        # an exception's class name: bounded by the code, never by the data
        "error": IDENTIFIER,
    }
    for port in (gw, rt):
        text = scrape_text(port)
        for word in forbidden:
            assert word not in text
        for s in samples(port):
            if not (s.name.startswith("grpc_") or s.name.startswith("agentmem_")):
                continue  # the client library's own process and platform metrics
            for label, v in s.labels.items():
                if label in ("le", "quantile"):
                    continue
                assert label in allowed_labels, (s.name, label)
                allowed = allowed_labels[label]
                ok = bool(allowed.fullmatch(v)) if isinstance(allowed, re.Pattern) else v in allowed
                assert ok, (s.name, label, v)


def test_no_metrics_port_unless_configured(stack):
    assert stack.gateway.metrics_port == 0 and stack.runtime.metrics_port == 0
