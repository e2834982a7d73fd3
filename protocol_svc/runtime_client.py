"""The gateway's client of the memory runtime.

Catches `grpc.RpcError` once and turns it into what the guard returns: an agentmem status
from the runtime passes through unchanged; a transport failure becomes UNAVAILABLE; any
other failure becomes INTERNAL. Idempotent calls are retried on UNAVAILABLE only, with
backoff, within the caller's remaining deadline, which is also the runtime call's deadline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_delay,
    wait_exponential_jitter,
)

from agentmem.contract.errors import AgentmemError, Reason
from agentmem.contract.grpc_errors import error_info, status_of_call
from agentmem.v1 import memory_service_pb2_grpc
from agentmem_kernel import internal_call, metrics
from agentmem_kernel.guard import UpstreamStatus
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb

log = logging.getLogger("agentmem.gateway.runtime")

# Reconnect soon after the runtime restarts: 100 ms after a failed attempt, then up to 1 s.
# gRPC reads `grpc.min_reconnect_backoff_ms` as the least time it gives one connection
# attempt (TCP, TLS and the runtime's first HTTP/2 frame): at 100 ms, a runtime slow to
# answer on a loaded machine failed the attempt, and with it the first call (UNAVAILABLE,
# not retried for a write without a request id). It keeps gRPC's 20 s, within each call's
# own deadline.
CONNECT_TIMEOUT_MS = 20_000
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS),
)
# Exponential backoff from 50 ms, capped at 1 s, with up to 50 ms of jitter.
BACKOFF = wait_exponential_jitter(multiplier=0.05, max=1.0, jitter=0.05)
_TRANSPORT = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}


class RuntimeUnavailable(AgentmemError):
    def __init__(self, detail: str) -> None:
        super().__init__(Reason.UNAVAILABLE, detail=detail)


class RuntimeClient:
    def __init__(
        self,
        address: str,
        credential: str,
        *,
        default_deadline: float,
        channel_credentials: grpc.ChannelCredentials | None = None,
        target_name: str = "",
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        options: Sequence[tuple[str, object]] = (),
    ) -> None:
        """`options`: keepalive and message-size options (`agentmem_kernel.transport`)."""
        opts = [*CHANNEL_OPTIONS, *options]
        if channel_credentials is None:
            self._channel = grpc.aio.insecure_channel(
                address, options=opts, interceptors=list(interceptors) or None
            )
        else:
            if target_name:
                opts.append(("grpc.ssl_target_name_override", target_name))
            self._channel = grpc.aio.secure_channel(
                address, channel_credentials, options=opts, interceptors=list(interceptors) or None
            )
        # The runtime serves the public service on its internal port.
        self._stub = memory_service_pb2_grpc.MemoryServiceStub(self._channel)
        self._credential = credential
        self._default_deadline = default_deadline

    async def close(self) -> None:
        await self._channel.close(grace=None)

    async def unary(
        self,
        method: str,
        request: Any,
        context: rpb.CallContext,
        *,
        time_remaining: float | None,
        idempotent: bool,
    ) -> Any:
        budget = time_remaining if time_remaining is not None else self._default_deadline
        deadline = time.monotonic() + budget
        call = getattr(self._stub, method)
        metadata = internal_call.metadata(self._credential, context)

        async def attempt() -> Any:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeUnavailable("deadline spent before the runtime answered")
            try:
                return await call(request, timeout=remaining, metadata=metadata)
            except grpc.aio.AioRpcError as e:
                raise translate(e) from None

        try:
            return await attempt()
        except RuntimeUnavailable as e:
            if not idempotent:
                raise
            failed = e
        # Retried only once the first attempt has failed (no retry state for calls that
        # succeed): that failure counts as the first attempt.
        async for retry in AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, RuntimeUnavailable)),
            stop=stop_after_delay(max(deadline - time.monotonic() - 0.05, 0)),
            wait=BACKOFF,
            reraise=True,
        ):
            first = retry.retry_state.attempt_number == 1
            if not first:
                metrics.RUNTIME_RETRIES.labels(method).inc()
            with retry:
                if first:
                    raise failed
                return await attempt()
        raise AssertionError("unreachable")

    async def stream_events(
        self,
        request: Any,
        context: rpb.CallContext,
        on_connected: Callable[[], None] = lambda: None,
    ) -> AsyncIterator[Any]:
        """The runtime's event stream (its events); `on_connected` is called once the
        runtime has accepted it (it sends its headers at once), before any event arrives."""
        call = self._stub.WatchEvents(
            request, metadata=internal_call.metadata(self._credential, context)
        )
        try:
            await call.initial_metadata()
            if not call.done():
                on_connected()
            async for answer in call:
                yield answer.event
        except grpc.aio.AioRpcError as e:
            raise translate(e) from None
        finally:
            call.cancel()


def translate(e: grpc.aio.AioRpcError) -> Exception:
    status = status_of_call(e)
    info = error_info(status)
    if info is not None and status is not None:
        if info.reason == Reason.UNAVAILABLE:  # e.g. a runtime replica draining: retryable
            return RuntimeUnavailable("runtime is unavailable")
        return UpstreamStatus(status)
    if e.code() in _TRANSPORT:
        return RuntimeUnavailable(f"runtime call failed: {e.code().name}")
    log.error("runtime call failed without an agentmem status", extra={"code": e.code().name})
    return AgentmemError(Reason.INTERNAL, detail=f"runtime returned {e.code().name}")
