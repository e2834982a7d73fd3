"""`Client`: the blocking Python client of the public API (`AsyncClient`, its asyncio twin, is
in `agentmem.client.aio`).

    import agentmem

    with agentmem.Client() as memory:          # AGENTMEM_ADDR / AGENTMEM_TOKEN by default
        saved = memory.insert_memory(
            content="I prefer window seats", save_intent="explicit_user_request",
            request_id="turn-42",                # makes the insert safe to retry
        )
        for hit in memory.search_memories(query="seat preference", limit=5).hits:
            print(hit.source_id, hit.snippet)

Every method takes keyword arguments and returns the response message (`AsyncClient`'s
are coroutines); a failure raises a typed `agentmem.ApiError` subclass decoded from the
ErrorInfo, whose `str()` says what failed (`NOT_FOUND: source src_… was not found`). A
value the client cannot send (`classification="frozen"`) raises `agentmem.InvalidArgument`
naming the field and what it accepts, before any call. Idempotent
calls (reads, and inserts and appends carrying a `request_id`) are retried on UNAVAILABLE with
exponential backoff (tenacity). `watch()` iterates events and resumes from the last
sequence it saw across disconnects.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import grpc
from google.protobuf.message import Message
from tenacity import Retrying

from agentmem.client.base import ClientBase, checked, make_stub
from agentmem.client.errors import ApiError, Unavailable, from_grpc_error
from agentmem.client.methods import Methods
from agentmem.client.raw import RawStub
from agentmem.client.settings import (
    DEFAULT_ADDRESS,
    ENV_ADDRESS,
    ENV_CA_FILE,
    ENV_EXPERIMENTAL,
    ENV_TLS,
    ENV_TOKEN,
    NO_RETRY,
    RetryPolicy,
    Settings,
    channel_target,
)
from agentmem.client.values import Reply, event_kinds, target_of
from agentmem.client.watch import OnResume, Resume
from agentmem.v1 import events_pb2

__all__ = [
    "DEFAULT_ADDRESS",
    "ENV_ADDRESS",
    "ENV_CA_FILE",
    "ENV_EXPERIMENTAL",
    "ENV_TLS",
    "ENV_TOKEN",
    "NO_RETRY",
    "Client",
    "MemoryClient",
    "RetryPolicy",
    "Settings",
    "channel_target",
    "connect",
]


class Client(ClientBase, Methods):
    """Blocking client. Use as a context manager, or call `close()`."""

    def __init__(
        self, address: str | grpc.Channel | None = None, token: str | None = None, **kwargs: Any
    ):
        given: grpc.Channel | None = None
        if isinstance(address, grpc.Channel):  # 0.1's MemoryClient(channel, token): no retries
            given, address = address, "channel"
            kwargs.setdefault("retry", NO_RETRY)
        super().__init__(address, token, **kwargs)
        s = self.settings
        if given is not None:
            self.channel = given
        elif s.credentials:
            self.channel = grpc.secure_channel(s.address, s.credentials, options=self._options())
        else:
            self.channel = grpc.insecure_channel(s.address, options=self._options())
        self._stub = make_stub(self.channel)

    def _call(
        self, name: str, request: Message, reply: type[Reply], timeout: float | None
    ) -> Reply:
        return checked(name, self._send(name, request, timeout), reply)

    def _send(self, name: str, request: Message, timeout: float | None) -> object:
        """One unary call by name, with this client's metadata, deadline and retries."""
        method = getattr(self._stub, name)
        target = target_of(request)

        def once() -> object:
            try:
                result: object = method(
                    request, metadata=self.metadata(), timeout=timeout or self.settings.timeout
                )
            except grpc.RpcError as e:
                raise from_grpc_error(e, target) from None
            return result

        if not self._retried(name, request):
            return once()
        return Retrying(**self.settings.retry.tenacity())(once)

    def watch(
        self,
        *,
        after_sequence: int = 0,
        kinds: Iterable[str | int] = (),
        give_up_after: float | None = None,
        on_resume: OnResume | None = None,
        retry: RetryPolicy | None = None,
    ) -> Iterator[events_pb2.Event]:
        """Events after `after_sequence`, forever. On a disconnect (UNAVAILABLE, a slow
        subscriber cut off, the stream ending, its credential expiring while a
        `token_provider` can give a fresh one) it reconnects from the last sequence it
        yielded, so nothing is missed or repeated (`on_resume(last, error)` is told first);
        it gives up after `give_up_after` seconds (default: the retry policy's deadline)
        without progress and raises the last error; `retry`: the backoff between reconnects
        (default: this client's retry policy). `agentmem.client.watch` holds the policy."""
        last, wanted = after_sequence, event_kinds(kinds)
        resume = Resume.of(retry or self.settings.retry, give_up_after, on_resume)
        while True:
            call = self._stub.WatchEvents(
                events_pb2.WatchEventsRequest(after_sequence=last, kinds=wanted),
                metadata=self.metadata(),
            )
            try:
                for item in call:
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
                time.sleep(delay)

    def call(self, rpc: str, request: Message, *, timeout: float | None = None) -> Message:
        """One public RPC by name with its request message (`call("GetSource",
        sources_pb2.GetSourceRequest(...))`): this client's credential, retries and typed
        errors, for code that names RPCs at run time."""
        return self._call(rpc, request, Message, timeout)

    @property
    def stub(self) -> RawStub:
        """The generated stub's methods (request messages in, responses out), each with
        this client's metadata, retries and typed errors."""
        return RawStub(self)

    def __getattr__(self, name: str) -> Any:
        # `client.InsertMemory(request)`: the stub's method with this client's metadata.
        if name[:1].isupper():
            return getattr(RawStub(self), name)
        raise AttributeError(name)

    def close(self) -> None:
        if self._owns_channel:
            self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    address: str,
    token: str,
    credentials: grpc.ChannelCredentials | None = None,
    *,
    ca_file: str | None = None,
    **kwargs: Any,
) -> Client:
    """A `Client` for `address` with `token` (kept for scripts written against 0.1: no
    retries unless `retry=` says otherwise). `https://host:port` (or a `ca_file`) connects
    with TLS, trusting the CA bundle in `ca_file` (default: $AGENTMEM_CA_FILE, else the
    system's roots)."""
    kwargs.setdefault("retry", NO_RETRY)
    target, credentials = channel_target(address, credentials, ca_file)
    client = Client(target, token, **kwargs)
    if credentials is not None:
        client.channel.close()
        client.channel = grpc.secure_channel(target, credentials)
        client._stub = make_stub(client.channel)
    return client


MemoryClient = Client  # the 0.1 name
