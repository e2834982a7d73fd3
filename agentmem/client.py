"""A small Python client: the generated stub with your bearer token on every call.

from agentmem.client import connect
from agentmem.v1 import thread_mode_pb2

with connect("127.0.0.1:50051", token) as client:
    client.ReadThreadMemoryMode(thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"))
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
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
    address: str,
    token: str,
    credentials: grpc.ChannelCredentials | None = None,
    *,
    ca_file: str | None = None,
) -> MemoryClient:
    """`https://host:port` (or a `ca_file`) connects with TLS, trusting the CA bundle in
    `ca_file` (default: $AGENTMEM_CA_FILE, else the system's roots); `host:port` connects
    in plaintext (loopback development)."""
    target, credentials = channel_target(address, credentials, ca_file)
    channel = (
        grpc.secure_channel(target, credentials) if credentials else grpc.insecure_channel(target)
    )
    return MemoryClient(channel, token)


def channel_target(
    address: str,
    credentials: grpc.ChannelCredentials | None = None,
    ca_file: str | None = None,
) -> tuple[str, grpc.ChannelCredentials | None]:
    """The gRPC target and channel credentials for an `https://` or plain address."""
    scheme, sep, rest = address.partition("://")
    target = rest if sep and scheme in ("https", "http") else address
    if credentials is None and ((scheme == "https" and sep) or ca_file):
        bundle = ca_file or os.environ.get("AGENTMEM_CA_FILE") or None
        roots = Path(bundle).read_bytes() if bundle else None
        credentials = grpc.ssl_channel_credentials(root_certificates=roots)
    return target, credentials
