"""The identity provider's signing keys (JWKS), fetched once for every caller waiting on them.

A fetched key set is used for `jwks_cache_seconds`; after that the next call refreshes it
in the background while calls go on with the last good set, which stays usable for
`jwks_max_stale_seconds` after it was fetched. Callers wait only when there is no usable set
(the first fetch, or a token naming a key the set lacks): one fetch runs for all of them, and
each waits at most `jwks_timeout_seconds`. A failed fetch is not repeated for a back-off
delay (doubling up to `MAX_BACKOFF_S`); meanwhile callers that need keys get UNAVAILABLE /
IDENTITY_PROVIDER_UNAVAILABLE with a RetryInfo naming when the next fetch may run. A token
naming an unknown key id refetches at most every `UNKNOWN_KID_REFRESH_S`, so a flood of
made-up key ids cannot turn into a flood of fetches.

Everything here runs on the gateway's event loop (the HTTP request in a worker thread), so
API-key callers, which never come here, never wait for the provider.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import metrics
from agentmem_kernel.config import Oidc

log = logging.getLogger("agentmem.gateway.jwks")
MAX_BACKOFF_S = 30.0
FIRST_BACKOFF_S = 1.0
UNKNOWN_KID_REFRESH_S = 10.0
MAX_JWKS_BYTES = 1024 * 1024

Jwk = Mapping[str, Any]


@dataclass(frozen=True)
class KeySet:
    keys: tuple[Jwk, ...]
    fetched_at: float

    def named(self, kid: str | None) -> list[Jwk]:
        return [k for k in self.keys if kid is None or k.get("kid") == kid]


def parse(document: bytes) -> tuple[Jwk, ...]:
    data = json.loads(document)
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        raise ValueError("a JWKS document holds a list of keys")
    return tuple(k for k in keys if isinstance(k, dict))


def _http_get(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return bytes(response.read(MAX_JWKS_BYTES + 1))


def unavailable(retry_after: float, detail: str) -> AgentmemError:
    return AgentmemError(
        Reason.IDENTITY_PROVIDER_UNAVAILABLE, retry_after=max(retry_after, 0.001), detail=detail
    )


class StaticKeys:
    """A JWKS file, read once at start-up."""

    def __init__(self, path: str) -> None:
        try:
            self._set = KeySet(parse(Path(path).read_bytes()), time.monotonic())
        except (OSError, ValueError) as e:
            raise SystemExit(f"cannot read auth.oidc.jwks_file: {e}") from None

    async def keys_for(self, kid: str | None) -> list[Jwk]:
        return self._set.named(kid)


class RemoteKeys:
    """The provider's JWKS URL, with single-flight fetches and the last good set kept."""

    def __init__(
        self,
        config: Oidc,
        *,
        clock: Callable[[], float] = time.monotonic,
        fetch: Callable[[str, float], bytes] = _http_get,
    ) -> None:
        self._url = config.jwks_url
        self._fresh_for = float(config.jwks_cache_seconds)
        self._usable_for = float(max(config.jwks_max_stale_seconds, config.jwks_cache_seconds))
        self._timeout = config.jwks_timeout_seconds
        self._clock, self._fetch = clock, fetch
        self._set: KeySet | None = None
        self._inflight: asyncio.Future[KeySet] | None = None
        self._retry_at = 0.0  # no fetch before this (after a failure)
        self._backoff = FIRST_BACKOFF_S

    async def keys_for(self, kid: str | None) -> list[Jwk]:
        now = self._clock()
        current = self._set
        if current is not None and now - current.fetched_at < self._usable_for:
            if now - current.fetched_at >= self._fresh_for and now >= self._retry_at:
                self._start_fetch()  # refreshed in the background; this call goes on
            found = current.named(kid)
            recent = now - current.fetched_at < UNKNOWN_KID_REFRESH_S
            if found or recent or (now < self._retry_at and self._inflight is None):
                return found
        elif now < self._retry_at and self._inflight is None:
            raise unavailable(self._retry_at - now, "key set fetch backing off")
        fetched = await self._wait(self._start_fetch())
        return fetched.named(kid)

    def _start_fetch(self) -> asyncio.Future[KeySet]:
        if self._inflight is None:
            self._inflight = asyncio.ensure_future(self._fetch_once())
            # A background refresh may fail with nobody waiting: its error is logged there.
            self._inflight.add_done_callback(lambda f: f.cancelled() or f.exception())
        return self._inflight

    async def _wait(self, inflight: asyncio.Future[KeySet]) -> KeySet:
        try:
            return await asyncio.wait_for(asyncio.shield(inflight), self._timeout)
        except TimeoutError:
            raise unavailable(self._timeout, "key set fetch timed out") from None

    async def _fetch_once(self) -> KeySet:
        try:
            document = await asyncio.wait_for(
                asyncio.to_thread(self._fetch, self._url, self._timeout), self._timeout
            )
            if len(document) > MAX_JWKS_BYTES:
                raise ValueError("the JWKS document is too large")
            fetched = KeySet(parse(document), self._clock())
        except Exception as e:  # HTTP error, timeout, refused connection, not a JWKS
            delay = self._backoff
            self._retry_at = self._clock() + delay
            self._backoff = min(self._backoff * 2, MAX_BACKOFF_S)
            metrics.JWKS_FETCH_FAILURES.inc()
            log.warning(
                "identity provider key set fetch failed",
                extra={"error": type(e).__name__, "retry_in_s": delay},
            )
            raise unavailable(delay, f"key set fetch failed: {type(e).__name__}") from None
        finally:
            self._inflight = None
        self._set, self._backoff, self._retry_at = fetched, FIRST_BACKOFF_S, 0.0
        return fetched
