"""Per-tenant request limits in the gateway: token buckets per tenant and per principal,
and concurrent watches per tenant.

Each gateway replica enforces its share of a configured value (the value divided by
`limits.gateway_replicas`), so N replicas behind a balancer together allow about the
configured rate without sharing state. A refused call gets RESOURCE_EXHAUSTED /
RATE_LIMITED with the limit's name and a RetryInfo saying when a token is back; one tenant's
buckets never touch another's.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import metrics
from agentmem_kernel.config import Limits, LimitValues

# Buckets of idle callers are dropped past this many (a full bucket is the same as none).
MAX_BUCKETS = 100_000


@dataclass
class Bucket:
    rate: float
    burst: float
    tokens: float
    updated: float

    def take(self, now: float) -> float:
        """0 when a token was taken, else the seconds until one is available."""
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def give_back(self) -> None:
        self.tokens = min(self.burst, self.tokens + 1)


class Limiter:
    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits, self._clock = limits, clock
        self._share = 1 / limits.gateway_replicas
        self._per_tenant: dict[str, LimitValues] = {}
        self._buckets: dict[tuple[str, ...], Bucket] = {}
        self._watches: dict[str, int] = {}

    def _values(self, tenant_id: str) -> LimitValues:
        values = self._per_tenant.get(tenant_id)
        if values is None:
            if len(self._per_tenant) >= MAX_BUCKETS:
                self._per_tenant.clear()  # a cache: recomputed on demand
            values = self._per_tenant[tenant_id] = self._limits.for_tenant(tenant_id)
        return values

    def admit(self, tenant_id: str, principal_id: str) -> None:
        """Takes a token from the principal's and the tenant's bucket, or refuses the call."""
        values = self._values(tenant_id)
        now = self._clock()
        taken: list[Bucket] = []
        checks = (
            (
                "requests_per_second_per_principal",
                (tenant_id, principal_id),
                values.requests_per_second_per_principal,
                values.burst_per_principal,
            ),
            (
                "requests_per_second_per_tenant",
                (tenant_id,),
                values.requests_per_second_per_tenant,
                values.burst_per_tenant,
            ),
        )
        for name, key, rate, burst in checks:
            if not rate:
                continue
            bucket = self._bucket(key, rate * self._share, burst, now)
            wait = bucket.take(now)
            if wait:
                for earlier in taken:  # a refused call costs nothing
                    earlier.give_back()
                metrics.LIMITED.labels(name).inc()
                raise AgentmemError(
                    Reason.RATE_LIMITED,
                    metadata={"limit": name, "value": number(rate)},
                    retry_after=wait,
                )
            taken.append(bucket)

    def _bucket(self, key: tuple[str, ...], rate: float, burst: int, now: float) -> Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._forget_full(now)
            size = max(1.0, float(burst) * self._share if burst else rate)
            bucket = self._buckets[key] = Bucket(rate, size, size, now)
        return bucket

    def _forget_full(self, now: float) -> None:
        forget_full(self._buckets, now)

    @contextlib.contextmanager
    def watch(self, tenant_id: str) -> Iterator[None]:
        """Holds one of the tenant's concurrent watches while the block runs."""
        allowed = self._values(tenant_id).watches_per_tenant
        if allowed:
            share = max(1, math.floor(allowed * self._share))
            if self._watches.get(tenant_id, 0) >= share:
                metrics.LIMITED.labels("watches_per_tenant").inc()
                raise AgentmemError(
                    Reason.QUOTA_EXCEEDED,
                    metadata={"limit": "watches_per_tenant", "value": str(allowed)},
                )
        self._watches[tenant_id] = self._watches.get(tenant_id, 0) + 1
        try:
            yield
        finally:
            left = self._watches[tenant_id] - 1
            if left:
                self._watches[tenant_id] = left
            else:
                del self._watches[tenant_id]


def forget_full(buckets: dict[Any, Bucket], now: float) -> None:
    """Drops the buckets that have refilled (a full bucket is the same as none)."""
    for key, b in list(buckets.items()):
        if b.tokens + (now - b.updated) * b.rate >= b.burst:
            del buckets[key]


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
