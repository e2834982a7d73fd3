"""`AsyncClient`: the asyncio client, with the same methods as `Client`, each a coroutine
(`agentmem.client.async_methods`), and `watch()` as an async iterator."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from typing import Any

import grpc
from google.protobuf.message import Message
from tenacity import AsyncRetrying

from agentmem.client.async_methods import AsyncMethods
from agentmem.client.base import ClientBase, checked, make_stub
from agentmem.client.errors import ApiError, Unavailable, from_grpc_error
from agentmem.client.settings import RetryPolicy
from agentmem.client.values import Reply, event_kinds, target_of
from agentmem.client.watch import OnResume, Resume
from agentmem.v1 import events_pb2


class AsyncClient(ClientBase, AsyncMethods):
    """asyncio client: the same methods as `Client`, each a coroutine."""

    def __init__(self, address: str | None = None, token: str | None = None, **kwargs: Any):
        super().__init__(address, token, **kwargs)
        self._channel: grpc.aio.Channel | None = None
        self._stub_: Any = None

    @property
    def _stub(self) -> Any:
        if self._stub_ is None:  # made on first use, inside the running event loop
            s = self.settings
            self._channel = (
                grpc.aio.secure_channel(s.address, s.credentials, options=self._options())
                if s.credentials
                else grpc.aio.insecure_channel(s.address, options=self._options())
            )
            self._stub_ = make_stub(self._channel)
        return self._stub_

    def with_token(self, token: str) -> AsyncClient:
        other = super().with_token(token)
        _ = self._stub  # share one channel
        return other

    async def _call(
        self, name: str, request: Message, reply: type[Reply], timeout: float | None
    ) -> Reply:
        return checked(name, await self._send(name, request, timeout), reply)

    async def _send(self, name: str, request: Message, timeout: float | None) -> object:
        """One unary call by name, with this client's metadata, deadline and retries."""
        method = getattr(self._stub, name)
        target = target_of(request)

        async def once() -> object:
            try:
                result: object = await method(
                    request, metadata=self.metadata(), timeout=timeout or self.settings.timeout
                )
            except grpc.RpcError as e:
                raise from_grpc_error(e, target) from None
            return result

        if not self._retried(name, request):
            return await once()
        async for attempt in AsyncRetrying(**self.settings.retry.tenacity()):
            with attempt:
                return await once()
        raise AssertionError("unreachable")  # pragma: no cover

    async def watch(
        self,
        *,
        after_sequence: int = 0,
        kinds: Iterable[str | int] = (),
        give_up_after: float | None = None,
        on_resume: OnResume | None = None,
        retry: RetryPolicy | None = None,
    ) -> AsyncGenerator[events_pb2.Event, None]:
        """As `Client.watch`, as an async iterator."""
        last, wanted = after_sequence, event_kinds(kinds)
        resume = Resume.of(retry or self.settings.retry, give_up_after, on_resume)
        while True:
            call = self._stub.WatchEvents(
                events_pb2.WatchEventsRequest(after_sequence=last, kinds=wanted),
                metadata=self.metadata(),
            )
            try:
                async for item in call:
                    resume.progressed()
                    last = item.event.sequence
                    yield item.event
                err: ApiError = Unavailable("the event stream ended")
            except grpc.RpcError as e:
                err = self._resumable(e)
            finally:
                call.cancel()
            delay = resume.wait_before_resuming(last, err)
            if delay:
                await asyncio.sleep(delay)

    async def call(self, rpc: str, request: Message, *, timeout: float | None = None) -> Message:
        """One public RPC by name with its request message (`call("GetSource",
        sources_pb2.GetSourceRequest(...))`): this client's credential, retries and typed
        errors, for code that names RPCs at run time."""
        return await self._call(rpc, request, Message, timeout)

    async def close(self) -> None:
        if self._channel is not None and self._owns_channel:
            await self._channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
