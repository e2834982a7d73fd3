"""A tenant's insert policy, when an admin has overridden the configured one."""

from __future__ import annotations

from typing import NamedTuple, cast

from sqlalchemy import (
    Connection,
    Table,
    bindparam,
    insert,
    select,
    update,
)

from runtime_svc.storage import compiled
from runtime_svc.storage.models import TenantPolicyRow
from runtime_svc.storage.repositories import _Repository

tenant_policies = cast(Table, TenantPolicyRow.__table__)


_SELECT_POLICY = select(tenant_policies.c.insert_policy, tenant_policies.c.revision).where(
    tenant_policies.c.tenant_id == bindparam("tenant")
)


class Override(NamedTuple):
    """An admin's insert policy for the tenant, and its revision (from 1)."""

    insert_policy: str
    revision: int


class TenantPolicies(_Repository):
    """A tenant's override of the configured insert policy.

    `known`: overrides already read in this transaction, by tenant (shared by the writes of
    one group commit, which hold the tenants' row locks; see `UnitOfWork`); a save forgets
    the tenant's, and so must the rollback of a savepoint that may have saved one."""

    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        known: dict[str, Override | None] | None = None,
    ) -> None:
        super().__init__(conn, tenant_id)
        self._known = known

    def get(self) -> Override | None:
        if self._known is not None and self.tenant_id in self._known:
            return self._known[self.tenant_id]
        row = compiled.execute(self.conn, _SELECT_POLICY, {"tenant": self.tenant_id}).one_or_none()
        policy = Override(row.insert_policy, row.revision) if row else None
        if self._known is not None:
            self._known[self.tenant_id] = policy
        return policy

    def save(self, insert_policy: str, revision: int, now_us: int) -> None:
        if self._known is not None:
            self._known.pop(self.tenant_id, None)
        values = {"insert_policy": insert_policy, "revision": revision, "updated_at_us": now_us}
        if revision == 1:
            self.conn.execute(insert(tenant_policies).values(tenant_id=self.tenant_id, **values))
        else:
            self.conn.execute(
                update(tenant_policies)
                .where(tenant_policies.c.tenant_id == self.tenant_id)
                .values(**values)
            )
