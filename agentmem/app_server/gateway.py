"""One connection's calls to the gateway: the typed client acting with its credential.

The bridge is a client of the gateway like `agentmem mcp`: the gateway authenticates,
authorizes, gates capabilities, validates and answers with the error model; the bridge
only sends. Unary calls keep the client's retries of idempotent calls on UNAVAILABLE. The
event stream resumes from the last sequence it delivered across gateway restarts (the
client's `watch`), for up to `WATCH_GIVE_UP` seconds without progress.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable

from google.protobuf.message import Message

from agentmem.client import AsyncClient, RetryPolicy
from agentmem.v1 import capabilities_pb2, events_pb2

WATCH_GIVE_UP = 300.0
_WATCH_RETRY = RetryPolicy(initial=0.1, maximum=5.0, deadline=WATCH_GIVE_UP)


class Gateway:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    @classmethod
    def connect(cls, address: str, token: str) -> Gateway:
        """A client of the gateway at `address` (TLS as `agentmem.Client` decides from
        the address and AGENTMEM_CA_FILE / AGENTMEM_TLS), acting with `token`."""
        return cls(AsyncClient(address, token, experimental=()))

    def acting_as(self, token: str) -> Gateway:
        """The same connection to the gateway, with another caller's credential."""
        return Gateway(self._client.with_token(token))

    def opted_in(self, capabilities: Iterable[str]) -> Gateway:
        """The same caller, accepting these experimental capabilities."""
        other = self._client.with_token(self._client.settings.token)
        other.settings = dataclasses.replace(other.settings, experimental=frozenset(capabilities))
        return Gateway(other)

    async def capabilities(self) -> capabilities_pb2.GetCapabilitiesResponse:
        response = await self.call("GetCapabilities", capabilities_pb2.GetCapabilitiesRequest())
        assert isinstance(response, capabilities_pb2.GetCapabilitiesResponse)
        return response

    async def call(self, rpc: str, request: Message) -> Message:
        """One public RPC; a failure raises the client's typed `ApiError`."""
        return await self._client.call(rpc, request)

    def watch(self, after_sequence: int, kinds: Iterable[int]) -> AsyncIterator[events_pb2.Event]:
        return self._client.watch(
            after_sequence=after_sequence,
            kinds=list(kinds),
            give_up_after=WATCH_GIVE_UP,
            retry=_WATCH_RETRY,
        )

    async def close(self) -> None:
        await self._client.close()
