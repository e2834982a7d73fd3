"""Owner keys and revoked assents."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table, insert, select, update

from runtime_svc.domain.foreign import OwnerKey
from runtime_svc.storage.models import OwnerKeyRow, RevokedAssentRow
from runtime_svc.storage.repositories import _Repository

owner_keys = cast(Table, OwnerKeyRow.__table__)
revoked_assents = cast(Table, RevokedAssentRow.__table__)


class OwnerKeys(_Repository):
    def get(self, owner: str, key_id: str) -> OwnerKey | None:
        row = self.conn.execute(
            select(owner_keys.c.public_key_pem, owner_keys.c.state).where(
                owner_keys.c.tenant_id == self.tenant_id,
                owner_keys.c.owner_id == owner,
                owner_keys.c.key_id == key_id,
            )
        ).one_or_none()
        return OwnerKey(row.public_key_pem, row.state == "active") if row else None

    def add(self, owner: str, key_id: str, pem: str, now_us: int) -> None:
        self.conn.execute(
            insert(owner_keys).values(
                tenant_id=self.tenant_id,
                owner_id=owner,
                key_id=key_id,
                public_key_pem=pem,
                state="active",
                created_at_us=now_us,
                revoked_at_us=0,
            )
        )

    def revoke(self, owner: str, key_id: str, now_us: int) -> None:
        self.conn.execute(
            update(owner_keys)
            .where(
                owner_keys.c.tenant_id == self.tenant_id,
                owner_keys.c.owner_id == owner,
                owner_keys.c.key_id == key_id,
            )
            .values(state="revoked", revoked_at_us=now_us)
        )


class RevokedAssents(_Repository):
    def contains(self, assent_id: str) -> bool:
        return (
            self.conn.execute(
                select(revoked_assents.c.assent_id).where(
                    revoked_assents.c.tenant_id == self.tenant_id,
                    revoked_assents.c.assent_id == assent_id,
                )
            ).first()
            is not None
        )

    def add(self, assent_id: str, source_id: str, now_us: int) -> None:
        if not self.contains(assent_id):
            self.conn.execute(
                insert(revoked_assents).values(
                    tenant_id=self.tenant_id,
                    assent_id=assent_id,
                    source_id=source_id,
                    revoked_at_us=now_us,
                )
            )
