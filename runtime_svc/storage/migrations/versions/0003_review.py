"""review of pending inserts, tenant insert policy

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tenant_policies",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("insert_policy", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("updated_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_tenant_policies")),
    )
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reviewed_by", sa.String(length=128), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("reviewed_at_us", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("review_note", sa.String(length=200), server_default="", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.drop_column("review_note")
        batch_op.drop_column("reviewed_at_us")
        batch_op.drop_column("reviewed_by")

    op.drop_table("tenant_policies")
