"""A server interceptor that admits each call and translates errors, for unary and streams.

`admit(method, context)` authenticates and authorizes (raising `AgentmemError`); it runs in
the handler's own task, so context variables it sets are visible to the servicer. Errors:
`AgentmemError` → its catalog status; `UpstreamStatus` → passed through unchanged; anything
else → INTERNAL with a generic message, the details in the log only. This covers errors
raised in the middle of a server stream too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.rpc import status_pb2
from grpc_status import rpc_status

from agentmem.core.errors import AgentmemError, Reason
from agentmem.core.grpc_errors import to_status_proto

log = logging.getLogger("agentmem.calls")

Admit = Callable[[str, grpc.aio.ServicerContext], Awaitable[dict[str, str]]]


class UpstreamStatus(Exception):
    """A rich status from another agentmem service, to be returned as it is."""

    def __init__(self, status: status_pb2.Status) -> None:
        super().__init__(status.message)
        self.status = status


class CallGuard(grpc.aio.ServerInterceptor):
    def __init__(self, admit: Admit, open_prefixes: tuple[str, ...]) -> None:
        self._admit = admit
        self._open = open_prefixes  # health and reflection: no credential needed
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._draining = False

    async def drain(self, timeout: float) -> None:
        """Refuses new calls with UNAVAILABLE and waits (up to `timeout`) for unary calls in
        flight to finish. gRPC's own stop() would answer calls it has not yet handed to a
        handler with CANCELLED; refusing them here first gives callers a retryable status."""
        self._draining = True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.warning("drain timed out", extra={"in_flight": self._in_flight})

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(self._open):
            return handler
        if handler.request_streaming:
            return handler  # no client-streaming RPCs in agentmem; nothing to admit
        if handler.response_streaming:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(method, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return grpc.unary_unary_rpc_method_handler(
            self._unary(method, handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _unary(self, method: str, behavior: Callable[..., Awaitable[Any]]):  # type: ignore[no-untyped-def]
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started, fields = time.perf_counter(), {}
            self._in_flight += 1
            self._idle.clear()
            try:
                if self._draining:
                    raise AgentmemError(Reason.UNAVAILABLE, detail="shutting down")
                fields = await self._admit(method, context)
                log.debug("call started", extra={"method": method, **fields})
                response = await behavior(request, context)
                _log_call(method, "OK", started, fields)
                return response
            except Exception as e:  # translated; AbortError re-raised by _abort
                await _abort(context, e, method, started, fields)
            finally:
                self._in_flight -= 1
                if not self._in_flight:
                    self._idle.set()

        return guarded

    def _stream(self, method: str, behavior: Callable[..., AsyncIterator[Any]]):  # type: ignore[no-untyped-def]
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            started, fields = time.perf_counter(), {}
            try:
                if self._draining:
                    raise AgentmemError(Reason.UNAVAILABLE, detail="shutting down")
                fields = await self._admit(method, context)
                async for item in behavior(request, context):
                    yield item
                _log_call(method, "OK", started, fields)
            except Exception as e:
                await _abort(context, e, method, started, fields)

        return guarded


async def _abort(
    context: grpc.aio.ServicerContext, e: Exception, method: str, started: float, fields: dict
) -> None:
    if isinstance(e, grpc.aio.AbortError):
        raise e
    if isinstance(e, UpstreamStatus):
        status = e.status
    elif isinstance(e, AgentmemError):
        status = to_status_proto(e)
        if e.detail:
            fields = {**fields, "detail": e.detail}
    else:
        log.exception("unexpected error", extra={"method": method, **fields})
        status = to_status_proto(AgentmemError(Reason.INTERNAL))
    grpc_status = rpc_status.to_status(status)
    _log_call(method, grpc_status.code.name, started, fields)
    await context.abort(grpc_status.code, grpc_status.details, grpc_status.trailing_metadata)


def _log_call(method: str, code: str, started: float, fields: dict) -> None:
    log.info(
        "call",
        extra={
            "method": method,
            "code": code,
            "ms": round((time.perf_counter() - started) * 1000, 3),
            **fields,
        },
    )
