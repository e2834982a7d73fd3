"""physical erasures: an erasure's physical part, pending until storage is scrubbed

One row per erased source: pending (`scrubbed_at_us = 0`) until a WAL checkpoint that
truncates the log (SQLite) or a VACUUM of the touched tables (PostgreSQL) covering it has
finished, so that `ReadbackSource` never reports an erasure complete while bytes may remain,
and a runtime restarted after a crash finishes what was pending. Sources erased before this
revision are recorded as pending: the next start-up scrubs and reports them.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "physical_erasures",
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("source_id", sa.String(64), nullable=False),
        sa.Column("erased_at_us", sa.BigInteger(), nullable=False),
        sa.Column("scrubbed_at_us", sa.BigInteger(), nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("tenant_id", "source_id", name="pk_physical_erasures"),
    )
    op.create_index("ix_physical_erasures_pending", "physical_erasures", ["scrubbed_at_us"])
    op.execute(
        "INSERT INTO physical_erasures (tenant_id, source_id, erased_at_us, scrubbed_at_us) "
        "SELECT tenant_id, source_id, erased_at_us, 0 FROM sources WHERE erased_at_us > 0"
    )


def downgrade() -> None:
    op.drop_index("ix_physical_erasures_pending", table_name="physical_erasures")
    op.drop_table("physical_erasures")
