"""A flood of bad credentials from one peer: after the peer's burst of failed
authentications, its calls are refused with RESOURCE_EXHAUSTED / RATE_LIMITED and a
RetryInfo before any verification work, while a caller with a valid API key is served."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from protocol_svc.peer_limits import FailedAuthLimiter, peer_address
from tests.faults.identity import forged, oidc, retry_delay
from tests.harness import ADMIN_A, metadata_of, reason
from tests.test_oidc import read

BURST, RATE = 5, 1.0


def _flood(client, stop: threading.Event, codes: Counter, delays: list) -> None:
    while not stop.is_set():
        try:
            read(client)
            codes["OK"] += 1
        except grpc.RpcError as e:
            codes[reason(e) or e.code().name] += 1
            if reason(e) == "RATE_LIMITED":
                delays.append(retry_delay(e))
                assert metadata_of(e)["limit"] == "failed_auth_per_second_per_peer"


def test_a_flood_of_bad_tokens_from_one_peer_is_cut_off(make_stack, provider):
    stack = make_stack(
        auth__oidc=oidc(provider["jwks"].url),
        limits__failed_auth_per_second_per_peer=RATE,
        limits__failed_auth_burst_per_peer=BURST,
    )
    bad = [
        stack.client(token="not-a-key"),
        stack.client(token=forged({"alg": "RS256", "kid": "rsa-1"})),
        stack.client(token=forged({"alg": "ES256", "kid": "nobody"})),
    ] * 4  # 12 flooding clients
    codes: Counter[str] = Counter()
    delays: list[float | None] = []
    stop = threading.Event()
    started = time.monotonic()
    with ThreadPoolExecutor(len(bad)) as pool:
        flooding = [pool.submit(_flood, c, stop, codes, delays) for c in bad]
        wait_for = time.monotonic() + 30
        while codes["RATE_LIMITED"] < 200 and time.monotonic() < wait_for:
            # A caller with a valid credential, from the same address, is served throughout.
            assert read(stack.client(ADMIN_A)).revision == 0
        stop.set()
        for f in flooding:
            f.result()
    elapsed = time.monotonic() - started
    assert codes["RATE_LIMITED"] >= 200, codes
    # Verified (and refused) only within the burst and the refill rate; the rest cut off.
    assert codes["UNAUTHENTICATED"] <= BURST + RATE * elapsed + 1, (codes, elapsed)
    assert "OK" not in codes
    assert delays and all(d and 0 < d <= 1 / RATE for d in delays)


def test_peer_addresses_are_ips_without_ports():
    assert peer_address("ipv4:10.1.2.3:5555") == "10.1.2.3"
    assert peer_address("ipv6:[::1]:5555") == "::1"
    assert peer_address("unix:/tmp/sock") == "unix:/tmp/sock"


def test_a_peer_refills_at_the_configured_rate():
    now = [0.0]
    limiter = FailedAuthLimiter(2.0, 3, clock=lambda: now[0])
    assert limiter.reserve("p") == 0
    limiter.succeeded("p")  # a success costs nothing
    for _ in range(3):
        assert limiter.reserve("p") == 0
    assert limiter.reserve("p") == pytest.approx(0.5)
    assert limiter.reserve("other") == 0
    now[0] = 0.5
    assert limiter.reserve("p") == 0
