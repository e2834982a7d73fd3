"""`client.stub` / `client.InsertMemory(request)`: the generated stub's methods, called with
request messages, each with the client's metadata, retries and typed errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.message import Message

from agentmem.client.errors import from_grpc_error
from agentmem.client.values import target_of
from agentmem.contract.rpcs import SERVICE

# The service's methods that answer with a stream (not retried: `Client.watch` resumes one).
STREAMS = {m.name for m in SERVICE.methods if m.server_streaming}

if TYPE_CHECKING:
    from agentmem.client import Client


class RawMethod:
    """One RPC of the generated stub, by name."""

    def __init__(self, client: Client, name: str) -> None:
        self._client = client
        self._name = name
        self._method: Any = getattr(client._stub, name)

    def __call__(
        self,
        request: Message,
        metadata: tuple[tuple[str, str | bytes], ...] = (),
        timeout: float | None = None,
    ) -> Any:
        """The response (for a streaming RPC, the stream); `metadata` is sent besides the
        client's own, and then the call is made once, without retries."""
        client = self._client
        if metadata:
            try:
                return self._method(
                    request, metadata=(*client.metadata(), *metadata), timeout=timeout
                )
            except grpc.RpcError as e:
                raise from_grpc_error(e, target_of(request)) from None
        if self._name in STREAMS:
            return self._method(request, metadata=client.metadata(), timeout=timeout)
        return client._send(self._name, request, timeout)

    def future(self, request: Message, **kwargs: Any) -> Any:
        """The call as a gRPC future, with the client's metadata."""
        return self._method.future(request, metadata=self._client.metadata(), **kwargs)


class RawStub:
    def __init__(self, client: Client) -> None:
        self._client = client

    def __getattr__(self, name: str) -> RawMethod:
        return RawMethod(self._client, name)
