"""The typed Python client of the public API: `Client` (blocking) and `AsyncClient` (asyncio).

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
calls (reads, and inserts carrying a `request_id`) are retried on UNAVAILABLE with
exponential backoff (tenacity). `watch()` iterates events and resumes from the last
sequence it saw across disconnects.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

from agentmem.client_async import AsyncMethods
from agentmem.client_errors import (
    ApiError,
    SubscriberTooSlow,
    TokenExpired,
    Unavailable,
    from_grpc_error,
)
from agentmem.client_methods import Methods
from agentmem.client_values import IDEMPOTENT, event_kinds, target_of
from agentmem.core import experimental as experimental_optin
from agentmem.v1 import events_pb2, memory_service_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
ENV_ADDRESS = "AGENTMEM_ADDR"
ENV_TOKEN = "AGENTMEM_TOKEN"
ENV_CA_FILE = "AGENTMEM_CA_FILE"  # PEM roots; setting it turns TLS on
ENV_TLS = "AGENTMEM_TLS"  # "1" for TLS with the system roots
ENV_EXPERIMENTAL = "AGENTMEM_EXPERIMENTAL"  # comma-separated capabilities to opt in to


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of idempotent calls on UNAVAILABLE, and watch() reconnects."""

    attempts: int = 5
    initial: float = 0.1
    maximum: float = 2.0
    deadline: float = 30.0
    # Called before each wait (tenacity's before_sleep), e.g. to log.
    before_sleep: Callable[[RetryCallState], None] | None = None

    def tenacity(self) -> dict[str, Any]:
        return {
            "retry": retry_if_exception_type(Unavailable),
            "stop": stop_after_attempt(self.attempts) | stop_after_delay(self.deadline),
            "wait": wait_exponential_jitter(
                multiplier=self.initial, max=self.maximum, jitter=self.initial
            ),
            "reraise": True,
            **({"before_sleep": self.before_sleep} if self.before_sleep else {}),
        }

    def backoff(self, failures: int) -> float:
        return min(self.maximum, self.initial * 2 ** max(0, failures - 1))


NO_RETRY = RetryPolicy(attempts=1)


@dataclass(frozen=True)
class Settings:
    address: str
    token: str
    credentials: grpc.ChannelCredentials | None
    server_name: str | None
    experimental: frozenset[str]
    retry: RetryPolicy
    timeout: float | None


def _settings(
    address: str | None,
    token: str | None,
    tls: bool | None,
    root_certificates: bytes | str | Path | None,
    server_name: str | None,
    experimental: Iterable[str] | None,
    retry: RetryPolicy | None,
    timeout: float | None,
) -> Settings:
    address = address or os.environ.get(ENV_ADDRESS) or DEFAULT_ADDRESS
    scheme, sep, rest = address.partition("://")
    if sep and scheme in ("https", "http"):  # https://host:port means TLS
        address = rest
        if scheme == "https" and tls is None:
            tls = True
    token = token if token is not None else os.environ.get(ENV_TOKEN, "")
    roots = root_certificates if root_certificates is not None else os.environ.get(ENV_CA_FILE)
    if tls is None:
        tls = bool(roots) or os.environ.get(ENV_TLS, "").lower() in ("1", "true", "yes")
    credentials = None
    if tls:
        pem = Path(roots).read_bytes() if isinstance(roots, (str, Path)) and roots else roots
        credentials = grpc.ssl_channel_credentials(root_certificates=pem or None)
    if experimental is None:
        experimental = os.environ.get(ENV_EXPERIMENTAL, "").split(",")
    return Settings(
        address=address,
        token=token,
        credentials=credentials,
        server_name=server_name,
        experimental=experimental_optin.decode(experimental),
        retry=retry or RetryPolicy(),
        timeout=timeout,
    )


class _Base:
    """Settings, credentials and metadata shared by `Client` and `AsyncClient`."""

    def __init__(
        self,
        address: str | None = None,
        token: str | None = None,
        *,
        tls: bool | None = None,
        root_certificates: bytes | str | Path | None = None,
        server_name: str | None = None,
        experimental: Iterable[str] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = 30.0,
        options: Iterable[tuple[str, Any]] = (),
        token_provider: Callable[[], str] | None = None,
    ) -> None:
        """`address`/`token` default to AGENTMEM_ADDR / AGENTMEM_TOKEN. TLS is on when
        `tls=True`, `root_certificates` (PEM bytes or a file) or AGENTMEM_CA_FILE is given.
        `experimental` names the experimental capabilities this client accepts (default:
        AGENTMEM_EXPERIMENTAL). `token_provider`, for short-lived tokens (OIDC): called for
        each call's credential instead of `token`, so that `watch()` resumes with a fresh
        one when its stream ends with TOKEN_EXPIRED."""
        self.settings = _settings(
            address, token, tls, root_certificates, server_name, experimental, retry, timeout
        )
        self._token_provider = token_provider
        self._owns_channel = True
        self._channel_options = list(options)

    @property
    def address(self) -> str:
        return self.settings.address

    def _options(self) -> list[tuple[str, Any]]:
        name = self.settings.server_name
        override = [("grpc.ssl_target_name_override", name)] if name else []
        return [*self._channel_options, *override]

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The request metadata every call carries: the bearer token and the opt-in."""
        entries: list[tuple[str, str]] = []
        token = self._token_provider() if self._token_provider else self.settings.token
        if token:
            entries.append(("authorization", f"Bearer {token}"))
        if self.settings.experimental:
            entries.append(
                (
                    experimental_optin.METADATA_KEY,
                    experimental_optin.encode(self.settings.experimental),
                )
            )
        return tuple(entries)

    def with_token(self, token: str) -> Any:
        """The same client (sharing its connection) acting with another credential."""
        other = copy.copy(self)
        other.settings = dataclasses.replace(self.settings, token=token)
        other._token_provider = None
        other._owns_channel = False
        return other

    def _resumable(self, e: grpc.RpcError) -> ApiError:
        """The typed error of a broken watch if resuming can help (a disconnect, a slow
        subscriber cut off, an expired credential when there is a provider of fresh ones);
        anything else is raised."""
        err = from_grpc_error(e)
        if isinstance(err, TokenExpired) and self._token_provider is not None:
            return err
        if not isinstance(err, (Unavailable, SubscriberTooSlow)):
            raise err from None
        return err

    def _retried(self, name: str, request: Any) -> bool:
        """Whether a failed call is tried again: an idempotent call, unless the policy
        allows one attempt only (then no retry state is made at all)."""
        if self.settings.retry.attempts <= 1:
            return False
        return name in IDEMPOTENT or (name == "InsertMemory" and bool(request.request_id))


class Client(_Base, Methods):
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
        self._stub = memory_service_pb2_grpc.MemoryServiceStub(self.channel)

    def _call(self, name: str, request: Any, timeout: float | None) -> Any:
        method = getattr(self._stub, name)
        target = target_of(request)

        def once() -> Any:
            try:
                return method(
                    request, metadata=self.metadata(), timeout=timeout or self.settings.timeout
                )
            except grpc.RpcError as e:
                raise from_grpc_error(e, target) from None

        if not self._retried(name, request):
            return once()
        return Retrying(**self.settings.retry.tenacity())(once)

    def watch(
        self,
        *,
        after_sequence: int = 0,
        kinds: Iterable[str | int] = (),
        give_up_after: float | None = None,
        on_resume: Callable[[int, ApiError], None] | None = None,
    ) -> Iterator[events_pb2.Event]:
        """Events after `after_sequence`, forever. On a disconnect (UNAVAILABLE, a slow
        subscriber cut off, the stream ending, its credential expiring while a
        `token_provider` can give a fresh one) it reconnects from the last sequence it
        yielded, so nothing is missed or repeated (`on_resume(last, error)` is told first);
        it gives up after `give_up_after` seconds (default: the retry policy's deadline)
        without progress and raises the last error."""
        last, wanted = after_sequence, event_kinds(kinds)
        policy, failures, failing_since = self.settings.retry, 0, 0.0
        deadline = policy.deadline if give_up_after is None else give_up_after
        while True:
            call = self._stub.WatchEvents(
                events_pb2.WatchEventsRequest(after_sequence=last, kinds=wanted),
                metadata=self.metadata(),
            )
            try:
                for item in call:
                    failures = 0
                    last = item.event.sequence
                    yield item.event
                err: ApiError = Unavailable("the event stream ended")
            except grpc.RpcError as e:
                err = self._resumable(e)
            finally:
                call.cancel()
            if isinstance(err, TokenExpired):  # at once, with the provider's fresh token
                if on_resume is not None:
                    on_resume(last, err)
                continue
            failures += 1
            now = time.monotonic()
            failing_since = now if failures == 1 else failing_since
            if now - failing_since > deadline:
                raise err
            if on_resume is not None:
                on_resume(last, err)
            time.sleep(policy.backoff(failures))

    @property
    def stub(self) -> Any:
        """The generated stub's methods (request messages in, responses out), each with
        this client's metadata, retries and typed errors."""
        return _RawStub(self)

    def __getattr__(self, name: str) -> Any:
        # `client.InsertMemory(request)`: the stub's method with this client's metadata.
        if name[:1].isupper():
            return getattr(_RawStub(self), name)
        raise AttributeError(name)

    def close(self) -> None:
        if self._owns_channel:
            self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _RawStub:
    def __init__(self, client: Client) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        client = self._client
        method = getattr(client._stub, name)

        def call(request: Any, metadata: tuple = (), timeout: float | None = None) -> Any:
            if metadata:
                try:
                    return method(
                        request, metadata=(*client.metadata(), *metadata), timeout=timeout
                    )
                except grpc.RpcError as e:
                    raise from_grpc_error(e, target_of(request)) from None
            if name == "WatchEvents":
                return method(request, metadata=client.metadata(), timeout=timeout)
            return client._call(name, request, timeout)

        call.future = lambda request, **kw: method.future(  # type: ignore[attr-defined]
            request, metadata=client.metadata(), **kw
        )
        return call


class AsyncClient(_Base, AsyncMethods):
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
            self._stub_ = memory_service_pb2_grpc.MemoryServiceStub(self._channel)
        return self._stub_

    def with_token(self, token: str) -> AsyncClient:
        other: AsyncClient = super().with_token(token)
        _ = self._stub  # share one channel
        return other

    async def _call(self, name: str, request: Any, timeout: float | None) -> Any:
        method = getattr(self._stub, name)
        target = target_of(request)

        async def once() -> Any:
            try:
                return await method(
                    request, metadata=self.metadata(), timeout=timeout or self.settings.timeout
                )
            except grpc.RpcError as e:
                raise from_grpc_error(e, target) from None

        if not self._retried(name, request):
            return await once()
        async for attempt in AsyncRetrying(**self.settings.retry.tenacity()):
            with attempt:
                return await once()
        raise AssertionError("unreachable")  # pragma: no cover

    async def watch(
        self, *, after_sequence: int = 0, kinds: Iterable[str | int] = ()
    ) -> AsyncIterator[events_pb2.Event]:
        """As `Client.watch`, as an async iterator."""
        last, wanted = after_sequence, event_kinds(kinds)
        policy, failures, failing_since = self.settings.retry, 0, 0.0
        while True:
            call = self._stub.WatchEvents(
                events_pb2.WatchEventsRequest(after_sequence=last, kinds=wanted),
                metadata=self.metadata(),
            )
            try:
                async for item in call:
                    failures = 0
                    last = item.event.sequence
                    yield item.event
                err: ApiError = Unavailable("the event stream ended")
            except grpc.RpcError as e:
                err = self._resumable(e)
            finally:
                call.cancel()
            if isinstance(err, TokenExpired):  # at once, with the provider's fresh token
                continue
            failures += 1
            now = time.monotonic()
            failing_since = now if failures == 1 else failing_since
            if now - failing_since > policy.deadline:
                raise err
            await asyncio.sleep(policy.backoff(failures))

    async def close(self) -> None:
        if self._channel is not None and self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


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
        client._stub = memory_service_pb2_grpc.MemoryServiceStub(client.channel)
    return client


MemoryClient = Client  # the 0.1 name


def channel_target(
    address: str,
    credentials: grpc.ChannelCredentials | None = None,
    ca_file: str | None = None,
) -> tuple[str, grpc.ChannelCredentials | None]:
    """The gRPC target and channel credentials for an `https://` or plain address."""
    scheme, sep, rest = address.partition("://")
    target = rest if sep and scheme in ("https", "http") else address
    if credentials is None and ((scheme == "https" and sep) or ca_file):
        bundle = ca_file or os.environ.get(ENV_CA_FILE) or None
        roots = Path(bundle).read_bytes() if bundle else None
        credentials = grpc.ssl_channel_credentials(root_certificates=roots)
    return target, credentials
