"""A server interceptor that counts every RPC and times it, by method and status code.

It sits outside the call guard, so it sees the status the guard chose (context.code() after
an abort) and calls the guard refused. Methods come from the registered handlers only: an
unknown method is not counted, so the label values are bounded by the service definitions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from agentmem_kernel import metrics
from agentmem_kernel.grpc_types import (
    Context,
    Continuation,
    Handler,
    Interceptor,
    StreamBehavior,
    UnaryBehavior,
    stream_of,
    unary_of,
)


class RpcMetrics(Interceptor):
    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming:
            return handler  # no client-streaming RPCs in agentmem
        service, _, method = handler_call_details.method.lstrip("/").rpartition("/")
        if handler.response_streaming:
            labels = ("server_stream", service, method)
            return grpc.unary_stream_rpc_method_handler(
                _stream(labels, stream_of(handler)),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        labels = ("unary", service, method)
        return grpc.unary_unary_rpc_method_handler(
            _unary(labels, unary_of(handler)),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def _code(context: Context, error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int) and code:  # some grpc versions keep the raw integer
        return next((c.name for c in grpc.StatusCode if c.value[0] == code), "UNKNOWN")
    if error is None:
        return "OK"
    return "CANCELLED" if isinstance(error, (GeneratorExit, asyncio.CancelledError)) else "UNKNOWN"


def _done(labels: tuple[str, str, str], code: str, started: float) -> None:
    metrics.HANDLED.labels(*labels, code).inc()
    metrics.HANDLING.labels(*labels, code).observe(time.perf_counter() - started)


def _unary(labels: tuple[str, str, str], behavior: UnaryBehavior) -> UnaryBehavior:
    async def counted(request: Any, context: Context) -> Any:
        metrics.STARTED.labels(*labels).inc()
        started, error = time.perf_counter(), None
        try:
            return await behavior(request, context)
        except BaseException as e:
            error = e
            raise
        finally:
            _done(labels, _code(context, error), started)

    return counted


def _stream(labels: tuple[str, str, str], behavior: StreamBehavior) -> StreamBehavior:
    async def counted(request: Any, context: Context) -> AsyncIterator[Any]:
        metrics.STARTED.labels(*labels).inc()
        started, error = time.perf_counter(), None
        try:
            async for item in behavior(request, context):
                yield item
        except BaseException as e:
            error = e
            raise
        finally:
            _done(labels, _code(context, error), started)

    return counted
