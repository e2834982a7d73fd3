"""The types of gRPC's asyncio server plumbing, named once for the interceptors.

gRPC's classes are not generic at run time; their stubs are. `Interceptor` is the base an
interceptor class derives from (subscripted for the type checker only). The stubs describe
a handler's behaviours as the blocking server's functions; on the asyncio server they are
coroutine functions and async generators, which `unary_of` and `stream_of` say."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import grpc

if TYPE_CHECKING:
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Interceptor: TypeAlias = grpc.aio.ServerInterceptor[Any, Any]
else:
    Context = grpc.aio.ServicerContext
    Handler = grpc.RpcMethodHandler
    Interceptor = grpc.aio.ServerInterceptor

Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler]]
UnaryBehavior: TypeAlias = Callable[[Any, Context], Awaitable[Any]]
StreamBehavior: TypeAlias = Callable[[Any, Context], AsyncIterator[Any]]


def unary_of(handler: Handler) -> UnaryBehavior:
    """A unary handler's behaviour on the asyncio server."""
    return cast(UnaryBehavior, handler.unary_unary)


def stream_of(handler: Handler) -> StreamBehavior:
    """A server-streaming handler's behaviour on the asyncio server."""
    return cast(StreamBehavior, handler.unary_stream)
