"""foreign sources

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "owner_keys",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("owner_id", sa.String(length=128), nullable=False),
        sa.Column("key_id", sa.String(length=128), nullable=False),
        sa.Column("public_key_pem", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "owner_id", "key_id", name=op.f("pk_owner_keys")),
    )
    op.create_table(
        "revoked_assents",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assent_id", sa.String(length=128), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("revoked_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "assent_id", name=op.f("pk_revoked_assents")),
    )
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("canonical_owner", sa.String(length=128), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("assent_id", sa.String(length=128), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("assent_key_id", sa.String(length=128), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("erased_at_us", sa.BigInteger(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.drop_column("erased_at_us")
        batch_op.drop_column("assent_key_id")
        batch_op.drop_column("assent_id")
        batch_op.drop_column("canonical_owner")

    op.drop_table("revoked_assents")
    op.drop_table("owner_keys")
