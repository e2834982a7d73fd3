"""OpenTelemetry tracing: one public call is one trace across the gateway, the runtime and
its SQL, with W3C traceparent between the two services and the trace id in the log lines."""

from __future__ import annotations

import json
import logging
import threading

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agentmem.process.logs import JsonFormatter
from agentmem_kernel import tracing
from tests.harness import ADMIN_A
from tests.memory_helpers import insert, search

PUBLIC = "/agentmem.v1.MemoryService/"
INTERNAL = PUBLIC  # the runtime serves the public service on its internal port


@pytest.fixture
def traced(make_stack):
    exporter = InMemorySpanExporter()
    return make_stack(span_exporter=exporter, tracing__enabled=True), exporter


def one_trace(exporter: InMemorySpanExporter, method: str) -> list:
    spans = exporter.get_finished_spans()
    roots = [
        s
        for s in spans
        if s.name == PUBLIC + method
        and s.kind == SpanKind.SERVER
        and service(s) == "agentmem-gateway"  # the runtime serves the same method
    ]
    assert len(roots) == 1, [s.name for s in spans]
    root = roots[0]
    assert root.parent is None
    return [s for s in spans if s.context.trace_id == root.context.trace_id]


def service(span) -> str:
    return span.resource.attributes["service.name"]


def check_spans_gateway_runtime_and_sql(trace: list, method: str) -> None:
    by_id = {s.context.span_id: s for s in trace}
    gateway = [s for s in trace if service(s) == "agentmem-gateway"]
    runtime = [s for s in trace if service(s) == "agentmem-runtime"]
    client = [s for s in gateway if s.kind == SpanKind.CLIENT and s.name == INTERNAL + method]
    server = [s for s in runtime if s.kind == SpanKind.SERVER and s.name == INTERNAL + method]
    assert len(client) == 1 and len(server) == 1
    # traceparent carried the gateway's client span to the runtime: it is the parent.
    assert server[0].parent.span_id == client[0].context.span_id
    sql = [s for s in runtime if {"db.system", "db.system.name"} & set(s.attributes)]
    assert sql, [s.name for s in runtime]
    for span in sql:  # every SQL span hangs under the runtime's server span
        node = span
        while node.parent is not None and node.context.span_id != server[0].context.span_id:
            node = by_id[node.parent.span_id]
        assert node is server[0]
        statement = str(
            span.attributes.get("db.statement", span.attributes.get("db.query.text", ""))
        )
        assert "quixotic" not in statement  # bound values never become attributes


def test_one_search_is_one_trace_across_gateway_runtime_and_sql(traced):
    stack, exporter = traced
    client = stack.client(ADMIN_A)
    insert(client, "the quixotic user plays a yellow guitar")
    exporter.clear()
    assert search(client, "quixotic guitar").hits
    trace = one_trace(exporter, "SearchMemories")
    check_spans_gateway_runtime_and_sql(trace, "SearchMemories")


def test_an_insert_through_group_commit_keeps_its_sql_in_its_trace(traced):
    stack, exporter = traced
    insert(stack.client(ADMIN_A), "the quixotic user lives in Lisbon")
    trace = one_trace(exporter, "InsertMemory")
    check_spans_gateway_runtime_and_sql(trace, "InsertMemory")


class _CallLines(logging.Handler):
    """Collects the JSON "call" lines; `wait(n)` returns once n have been written (each is
    written just after its call's answer has been handed to gRPC)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter("test", tracing.current_ids))
        self.lines: list[dict] = []
        self._more = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        line = json.loads(self.format(record))
        if line["msg"] == "call":
            with self._more:
                self.lines.append(line)
                self._more.notify_all()

    def wait(self, n: int) -> list[dict]:
        with self._more:
            assert self._more.wait_for(lambda: len(self.lines) >= n, timeout=10), self.lines
            return list(self.lines)


def call_log_lines(call, expect: int = 2) -> list[dict]:
    """The JSON "call" lines the services log for `call()` (one in the gateway, one in the
    runtime: `expect`)."""
    handler = _CallLines()
    calls = logging.getLogger("agentmem.calls")
    calls.addHandler(handler)
    level = calls.level
    calls.setLevel(logging.INFO)
    try:
        call()
        return handler.wait(expect)
    finally:
        calls.removeHandler(handler)
        calls.setLevel(level)


def test_log_lines_of_a_call_carry_its_trace_id(traced):
    stack, exporter = traced
    lines = call_log_lines(lambda: search(stack.client(ADMIN_A), "anything at all"))
    trace_id = format(one_trace(exporter, "SearchMemories")[0].context.trace_id, "032x")
    assert len(lines) == 2  # one in the gateway, one in the runtime
    assert all(line["trace_id"] == trace_id and line["span_id"] for line in lines)


def test_without_an_exporter_trace_ids_still_reach_both_services_logs(make_stack):
    stack = make_stack(tracing__enabled=True)
    client = stack.client(ADMIN_A)
    lines = call_log_lines(lambda: search(client, "anything", thread_id="t1"))
    assert len(lines) == 2
    assert len({line["trace_id"] for line in lines}) == 1
    assert len(lines[0]["trace_id"]) == 32 and int(lines[0]["trace_id"], 16)
    again = call_log_lines(lambda: search(client, "anything"))
    assert again[0]["trace_id"] != lines[0]["trace_id"]  # a new call, a new trace


def test_no_spans_without_tracing(make_stack):
    stack = make_stack()
    assert stack.settings.tracing.enabled is False
    from agentmem_kernel import tracing

    assert tracing.provider(stack.settings.tracing, "x") is None
