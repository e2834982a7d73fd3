"""An open WatchEvents stream does not outlive its credential: at the JWT's expiry it ends
with UNAUTHENTICATED / TOKEN_EXPIRED, and the clients' resumable watch reconnects with a
fresh token from its provider, missing and repeating nothing."""

from __future__ import annotations

import asyncio
import threading
import time

import grpc
import pytest

from agentmem.client import AsyncClient, Client
from agentmem.client.errors import TokenExpired
from agentmem.v1 import events_pb2
from tests.faults.identity import oidc
from tests.harness import ADMIN_A, reason
from tests.test_oidc import token
from tests.test_thread_mode import DISABLED, ENABLED, set_mode

LIFETIME = 3  # seconds a test token is valid


def short_lived(provider) -> str:
    now = int(time.time())
    return token(provider, scope="memory.read memory.policy", iat=now, exp=now + LIFETIME)


class Producer:
    """Toggles a thread's memory mode with an API key until stopped: one event each."""

    def __init__(self, client) -> None:
        self.stop = threading.Event()
        self._client = client
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        revision = 0
        while not self.stop.is_set():
            mode = DISABLED if revision % 2 == 0 else ENABLED
            revision = set_mode(self._client, mode, revision, thread_id="tick").revision
            self.stop.wait(0.05)  # a pace for the events, not a synchronisation

    def close(self) -> None:
        self.stop.set()
        self._thread.join(10)


@pytest.fixture
def expiring(make_stack, provider):
    return make_stack(auth__oidc=oidc(provider["jwks"].url, leeway=0))


def test_a_watch_ends_with_token_expired_at_the_tokens_expiry(expiring, provider):
    bearer = short_lived(provider)
    expires_at = jwt_exp(bearer)
    producer = Producer(expiring.client(ADMIN_A))
    client = expiring.client(token=bearer)
    received_after_expiry = []
    try:
        stream = client.WatchEvents(events_pb2.WatchEventsRequest(), timeout=30)
        with pytest.raises(grpc.RpcError) as err:
            for item in stream:
                if time.time() > expires_at + 0.5:
                    received_after_expiry.append(item.event.sequence)
    finally:
        producer.close()
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, err.value.details()
    assert reason(err.value) == "TOKEN_EXPIRED"
    assert not received_after_expiry
    assert time.time() >= expires_at


def test_the_resumable_watch_reconnects_with_a_fresh_token(expiring, provider):
    minted = []

    def fresh() -> str:
        minted.append(short_lived(provider))
        return minted[-1]

    producer = Producer(expiring.client(ADMIN_A))
    client = Client(expiring.address, token_provider=fresh, timeout=10)
    seen: list[int] = []
    resumed: list[str] = []
    try:
        for event in client.watch(on_resume=lambda last, e: resumed.append(e.reason or "")):
            seen.append(event.sequence)
            if len(resumed) >= 2 and len(seen) > 5:
                break
    finally:
        producer.close()
        client.close()
    assert resumed[:2] == ["TOKEN_EXPIRED", "TOKEN_EXPIRED"]
    assert seen == list(range(1, len(seen) + 1))  # no gap, no repeat across reconnects
    assert len(minted) >= 3


def test_the_async_watch_reconnects_with_a_fresh_token(expiring, provider):
    minted = []

    def fresh() -> str:
        minted.append(short_lived(provider))
        return minted[-1]

    producer = Producer(expiring.client(ADMIN_A))

    async def main() -> list[int]:
        client = AsyncClient(expiring.address, token_provider=fresh, timeout=10)
        seen: list[int] = []
        try:
            async for event in client.watch():
                seen.append(event.sequence)
                if len(minted) >= 3 and len(seen) > 5:
                    return seen
        finally:
            await client.close()
        return seen

    try:
        seen = asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        producer.close()
    assert seen == list(range(1, len(seen) + 1))


def test_without_a_token_provider_the_watch_raises_token_expired(expiring, provider):
    producer = Producer(expiring.client(ADMIN_A))
    client = Client(expiring.address, short_lived(provider), timeout=10)
    try:
        with pytest.raises(TokenExpired):
            for _ in client.watch():
                pass
    finally:
        producer.close()
        client.close()


def jwt_exp(bearer: str) -> float:
    import jwt

    return float(jwt.decode(bearer, options={"verify_signature": False})["exp"])
