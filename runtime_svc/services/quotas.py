"""Stored quotas per tenant: how many memories and how many bytes it may keep.

Checked in the writer's transaction, after the tenant's row lock is taken, so the count is
exact on one runtime and across replicas alike. Nothing is counted when no quota applies to
the tenant. An insert that would pass a quota fails with RESOURCE_EXHAUSTED /
QUOTA_EXCEEDED naming the limit; no RetryInfo, since waiting frees nothing.
"""

from __future__ import annotations

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel.config import Limits
from runtime_svc.domain.caller import Caller
from runtime_svc.storage import usage
from runtime_svc.storage.transaction import Transaction


class StoredQuotas:
    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    def check_insert(
        self, tx: Transaction, caller: Caller, adding_bytes: int, new_memory: bool = True
    ) -> None:
        """In the insert's own write transaction, after its retry check: a retry of a stored
        insert never reaches here, and the tenant's row lock is already held. An append
        (`new_memory` false) adds bytes to a memory already counted."""
        limit = self._limits.for_tenant(caller.tenant_id)
        if not (limit.memories_per_tenant or limit.bytes_per_tenant):
            return
        used = usage.stored(tx.conn, caller.tenant_id)
        if (
            new_memory
            and limit.memories_per_tenant
            and used.memories + 1 > limit.memories_per_tenant
        ):
            raise _exceeded("memories_per_tenant", limit.memories_per_tenant)
        if limit.bytes_per_tenant and used.bytes + adding_bytes > limit.bytes_per_tenant:
            raise _exceeded("bytes_per_tenant", limit.bytes_per_tenant)


def _exceeded(name: str, value: int) -> AgentmemError:
    return AgentmemError(Reason.QUOTA_EXCEEDED, metadata={"limit": name, "value": str(value)})
