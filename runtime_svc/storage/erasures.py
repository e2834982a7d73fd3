"""Erasures' physical part: recorded pending in the erasure's transaction, scrubbed once a
checkpoint or VACUUM covering it has finished (`runtime_svc.services.erasure_finisher`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection, Table, delete, func, insert, select, update

from runtime_svc.storage.models import PhysicalErasureRow
from runtime_svc.storage.repositories import _Repository

erasures = cast(Table, PhysicalErasureRow.__table__)
MAX_PENDING = 10_000  # read per round; a backlog larger than this takes several rounds


@dataclass(frozen=True)
class PendingErasure:
    tenant_id: str
    source_id: str


class PhysicalErasures(_Repository):
    def record(self, source_id: str, erased_at_us: int) -> None:
        """The source (or turns of it: a partial erasure) was erased in this transaction:
        its physical part is pending, again if an earlier erasure of it was scrubbed."""
        self.conn.execute(
            delete(erasures).where(
                erasures.c.tenant_id == self.tenant_id, erasures.c.source_id == source_id
            )
        )
        self.conn.execute(
            insert(erasures).values(
                tenant_id=self.tenant_id,
                source_id=source_id,
                erased_at_us=erased_at_us,
                scrubbed_at_us=0,
            )
        )

    def scrubbed_at(self, source_id: str) -> int | None:
        """When storage was scrubbed of the erased source (0: pending; None: no record,
        an erasure older than this record, which the upgrade recorded as pending)."""
        return self.conn.execute(
            select(erasures.c.scrubbed_at_us).where(
                erasures.c.tenant_id == self.tenant_id, erasures.c.source_id == source_id
            )
        ).scalar_one_or_none()

    def mark_scrubbed(self, source_ids: list[str], at_us: int) -> list[str]:
        """Those of `source_ids` still pending, now scrubbed at `at_us`."""
        still = list(
            self.conn.execute(
                select(erasures.c.source_id).where(
                    erasures.c.tenant_id == self.tenant_id,
                    erasures.c.source_id.in_(source_ids),
                    erasures.c.scrubbed_at_us == 0,
                )
            ).scalars()
        )
        if still:
            self.conn.execute(
                update(erasures)
                .where(erasures.c.tenant_id == self.tenant_id, erasures.c.source_id.in_(still))
                .values(scrubbed_at_us=at_us)
            )
        return still


def pending(conn: Connection) -> list[PendingErasure]:
    """Erasures of every tenant whose physical part is pending (oldest first)."""
    rows = conn.execute(
        select(erasures.c.tenant_id, erasures.c.source_id)
        .where(erasures.c.scrubbed_at_us == 0)
        .order_by(erasures.c.erased_at_us)
        .limit(MAX_PENDING)
    )
    return [PendingErasure(r.tenant_id, r.source_id) for r in rows]


def recorded(conn: Connection) -> tuple[int, int]:
    """How many erasures are recorded (every tenant) and when the latest was: a process
    sees by it that one was made elsewhere since it last looked (a source erased again,
    turns of it after turns of it, keeps one record with a later time)."""
    row = conn.execute(
        select(func.count(), func.coalesce(func.max(erasures.c.erased_at_us), 0)).select_from(
            erasures
        )
    ).one()
    return int(row[0]), int(row[1])
