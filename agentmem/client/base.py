"""What `Client` and `AsyncClient` share: settings, the credential and metadata each call
carries, which calls are retried, and which broken watches are resumed."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self

import grpc
from google.protobuf.message import Message

from agentmem.client.errors import (
    ApiError,
    SubscriberTooSlow,
    TokenExpired,
    Unavailable,
    from_grpc_error,
)
from agentmem.client.settings import RetryPolicy, settings
from agentmem.client.values import IDEMPOTENT, Reply
from agentmem.contract import experimental as experimental_optin
from agentmem.contract import rpcs
from agentmem.v1 import memory_service_pb2_grpc

# The generated stub's constructor (generated code carries no annotations): its methods are
# the RPCs by name, called with a request message and returning the response (or a call).
_MakeStub = Callable[[grpc.Channel | grpc.aio.Channel], Any]
make_stub: _MakeStub = memory_service_pb2_grpc.MemoryServiceStub


class ClientBase:
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
        self.settings = settings(
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

    def with_token(self, token: str) -> Self:
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

    def _retried(self, name: str, request: Message) -> bool:
        """Whether a failed call is tried again: an idempotent call, unless the policy
        allows one attempt only (then no retry state is made at all)."""
        if self.settings.retry.attempts <= 1:
            return False
        if name in IDEMPOTENT:
            return True
        return name in rpcs.KEYED and bool(getattr(request, "request_id", ""))


def checked(name: str, result: object, reply: type[Reply]) -> Reply:
    """A call's result, checked to be the response message its method declares."""
    if not isinstance(result, reply):
        raise TypeError(f"{name} returned {type(result).__name__}, not {reply.__name__}")
    return result
