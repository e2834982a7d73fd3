"""A small Python client: the generated stub with your bearer token on every call.

from agentmem.client import connect
from agentmem.v1 import thread_mode_pb2

with connect("127.0.0.1:50051", token) as client:
    client.ReadThreadMemoryMode(thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from agentmem.v1 import memory_service_pb2_grpc


class MemoryClient:
    """Every MemoryService method, called with `authorization: Bearer <token>`."""

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self.channel = channel
        self._stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._stub, name)

        def call(request: Any, metadata: tuple = (), **kwargs: Any) -> Any:
            return method(request, metadata=(*self._metadata, *metadata), **kwargs)

        call.future = lambda request, **kw: method.future(request, metadata=self._metadata, **kw)  # type: ignore[attr-defined]
        return call

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    address: str, token: str, credentials: grpc.ChannelCredentials | None = None
) -> MemoryClient:
    channel = (
        grpc.secure_channel(address, credentials) if credentials else grpc.insecure_channel(address)
    )
    return MemoryClient(channel, token)
