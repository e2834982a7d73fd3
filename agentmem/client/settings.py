"""Where a client connects and how: its address, credential, TLS, experimental opt-ins,
retry policy and deadline, from its arguments or the AGENTMEM_* environment."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import grpc
from tenacity import (
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from agentmem.client.commands import DEFAULT_ADDRESS as DEFAULT_ADDRESS
from agentmem.client.commands import ENV_ADDRESS as ENV_ADDRESS
from agentmem.client.commands import ENV_EXPERIMENTAL as ENV_EXPERIMENTAL
from agentmem.client.commands import ENV_TOKEN as ENV_TOKEN
from agentmem.client.errors import Unavailable
from agentmem.contract import experimental as experimental_optin

ENV_CA_FILE = "AGENTMEM_CA_FILE"  # PEM roots; setting it turns TLS on
ENV_TLS = "AGENTMEM_TLS"  # "1" for TLS with the system roots


class RetryArguments(TypedDict, total=False):
    """tenacity's `Retrying(...)` / `AsyncRetrying(...)` arguments for a policy."""

    retry: retry_base
    stop: stop_base
    wait: wait_base
    reraise: bool
    before_sleep: Callable[[RetryCallState], None]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of idempotent calls on UNAVAILABLE, and watch() reconnects."""

    attempts: int = 5
    initial: float = 0.1
    maximum: float = 2.0
    deadline: float = 30.0
    # Called before each wait (tenacity's before_sleep), e.g. to log.
    before_sleep: Callable[[RetryCallState], None] | None = None

    def tenacity(self) -> RetryArguments:
        arguments = RetryArguments(
            retry=retry_if_exception_type(Unavailable),
            stop=stop_after_attempt(self.attempts) | stop_after_delay(self.deadline),
            wait=wait_exponential_jitter(
                multiplier=self.initial, max=self.maximum, jitter=self.initial
            ),
            reraise=True,
        )
        if self.before_sleep:
            arguments["before_sleep"] = self.before_sleep
        return arguments

    def backoff(self, failures: int) -> float:
        return min(self.maximum, self.initial * 2.0 ** max(0, failures - 1))


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


def settings(
    address: str | None,
    token: str | None,
    tls: bool | None,
    root_certificates: bytes | str | Path | None,
    server_name: str | None,
    experimental: Iterable[str] | None,
    retry: RetryPolicy | None,
    timeout: float | None,
) -> Settings:
    """A client's settings: each argument, else its AGENTMEM_* variable, else the default."""
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
        pem = roots if isinstance(roots, bytes) else Path(roots).read_bytes() if roots else None
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
