"""The services' log lines: JSON, carrying the trace id of the call that logged them, written
by the thread that logs them."""

from __future__ import annotations

import io
import json
import logging
import threading

import pytest
from opentelemetry.sdk.trace import TracerProvider

from agentmem.process import logs
from agentmem_kernel import tracing


@pytest.fixture
def configured(monkeypatch):
    """`logs.configure` writing to a buffer; what it changed restored afterwards."""
    out = io.StringIO()
    monkeypatch.setattr("sys.stderr", out)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    for name in ("_srcfile", "logThreads", "logProcesses", "logMultiprocessing"):
        monkeypatch.setattr(logging, name, getattr(logging, name))
    # Python 3.12 on; set on older ones too
    monkeypatch.setattr(
        logging, "logAsyncioTasks", getattr(logging, "logAsyncioTasks", True), raising=False
    )
    logs.configure("test-service", trace_ids=tracing.current_ids)
    yield out
    root.handlers[:], _ = saved
    root.setLevel(saved[1])


def written(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_line_carries_the_trace_id_of_the_thread_that_logs_it(configured):
    out = configured
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("call") as span:
        logging.getLogger("agentmem.calls").info("call", extra={"method": "Search", "ms": 1.5})
        trace_id = f"{span.get_span_context().trace_id:032x}"
        span_id = f"{span.get_span_context().span_id:016x}"
    elsewhere = threading.Thread(
        target=lambda: logging.getLogger("agentmem.calls").info("outside", extra={"code": "OK"})
    )
    elsewhere.start()
    elsewhere.join(timeout=10)

    first, second = written(out)
    assert (first["msg"], first["method"], first["ms"]) == ("call", "Search", 1.5)
    assert (first["trace_id"], first["span_id"]) == (trace_id, span_id)
    assert first["service"] == "test-service" and first["level"] == "info"
    assert second["msg"] == "outside" and "trace_id" not in second
    # What the records no longer look up never reached a line anyway.
    assert not {"lineno", "funcName", "thread", "process"} & first.keys()


def test_an_exception_logged_is_written_with_its_traceback(configured):
    out = configured
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("agentmem.runtime").exception("unexpected error")
    (line,) = written(out)
    assert line["level"] == "error" and "ValueError: boom" in line["exc"]
