"""Failed authentications per peer address: a flood of bad credentials is cut off cheaply.

Each failed authentication costs a token of its peer's bucket (`limits.
failed_auth_per_second_per_peer`, burst `failed_auth_burst_per_peer`). While a peer's
bucket is empty, its calls get no verification work: only an API key (a hash looked up in
a table, as cheap as refusing) is still recognised, and anything else is refused at once
with RESOURCE_EXHAUSTED / RATE_LIMITED and a RetryInfo saying when the peer may try again.
A peer is an IP address (the port is the caller's to change); successful calls cost
nothing. Behind a proxy every caller shares its address: raise the limit or set it to 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import metrics
from protocol_svc.limits import MAX_BUCKETS, Bucket, forget_full, number

LIMIT = "failed_auth_per_second_per_peer"


def peer_address(peer: str) -> str:
    """The IP address of a gRPC peer string (`ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6" and rest.startswith("["):
        return rest[1 : rest.find("]")] if "]" in rest else rest
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    return peer  # unix sockets and others: one peer per string


class FailedAuthLimiter:
    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate, self._burst = rate, float(max(burst, 1))
        self._clock = clock
        self._buckets: dict[str, Bucket] = {}

    def reserve(self, peer: str) -> float:
        """Takes one of `peer`'s failures in advance (so that calls verified at the same
        time cannot pass the limit together): 0 if taken, else the seconds until one is
        back. A call that then authenticates gives it back (`succeeded`)."""
        if not self._rate:
            return 0.0
        now = self._clock()
        bucket = self._buckets.get(peer)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                forget_full(self._buckets, now)
            bucket = self._buckets[peer] = Bucket(self._rate, self._burst, self._burst, now)
        return bucket.take(now)

    def succeeded(self, peer: str) -> None:
        bucket = self._buckets.get(peer) if self._rate else None
        if bucket is not None:
            bucket.give_back()

    def refused(self, wait: float) -> AgentmemError:
        metrics.LIMITED.labels(LIMIT).inc()
        return AgentmemError(
            Reason.RATE_LIMITED,
            metadata={"limit": LIMIT, "value": number(self._rate)},
            retry_after=wait,
            detail="too many failed authentications from this peer",
        )
