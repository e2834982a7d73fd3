"""OpenTelemetry tracing, off unless configured.

With `tracing.enabled` (or an OTLP endpoint) each process gets its own TracerProvider: gRPC
server spans in both processes and client spans on the gateway's runtime calls
(opentelemetry-instrumentation-grpc, which propagates W3C `traceparent` in the call
metadata), and SQL spans on the runtime's engines (opentelemetry-instrumentation-sqlalchemy,
statements with placeholders, never bound values). Spans are exported over OTLP/gRPC only
when `tracing.otlp_endpoint` is set; tests hand in an exporter of their own. Nothing is
installed globally, so two services in one process (as in tests) keep separate providers.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased, TraceIdRatioBased
from sqlalchemy import Engine

from agentmem_kernel.config import Tracing

T = TypeVar("T")


def provider(
    settings: Tracing, service: str, exporter: SpanExporter | None = None
) -> TracerProvider | None:
    """The process's tracer provider, or None when tracing is off."""
    exporting = bool(settings.otlp_endpoint) or exporter is not None
    if not (settings.enabled or exporting):
        return None
    # Without an exporter nothing would read a recorded span: spans are made (trace ids for
    # the logs, traceparent for the runtime) but not recorded, which costs far less.
    sampler = ParentBased(TraceIdRatioBased(settings.sample_ratio)) if exporting else ALWAYS_OFF
    tp = TracerProvider(resource=Resource.create({"service.name": service}), sampler=sampler)
    if settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        tp.add_span_processor(
            BatchSpanProcessor(
                OTLPSpanExporter(endpoint=settings.otlp_endpoint, insecure=settings.otlp_insecure)
            )
        )
    if exporter is not None:
        tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


def server_interceptors(tp: TracerProvider | None) -> list[Any]:
    if tp is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor(tracer_provider=tp)]


def client_interceptors(tp: TracerProvider | None) -> list[Any]:
    if tp is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return list(aio_client_interceptors(tracer_provider=tp))


def instrument_engine(engine: Engine, tp: TracerProvider | None) -> None:
    """SQL spans for one engine (the instrumentor's global `instrument()` would patch every
    engine the process ever creates)."""
    if tp is None:
        return
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.instrumentation.sqlalchemy.version import __version__

    usage = (
        NoOpMeterProvider()
        .get_meter(__name__)
        .create_up_down_counter("db.client.connections.usage", unit="connections")
    )
    EngineTracer(
        trace.get_tracer("opentelemetry.instrumentation.sqlalchemy", __version__, tp),
        engine,
        usage,
    )


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool whose tasks run in the submitter's context (the active span, the
    caller): `loop.run_in_executor` does not carry context variables across by itself."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        context = contextvars.copy_context()
        return super().submit(context.run, fn, *args, **kwargs)


def current_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the active span, hex, or None outside a traced call."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")
