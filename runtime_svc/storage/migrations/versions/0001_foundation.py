"""foundation: tenant state, thread modes, event log, audit receipts

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_receipts",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("receipt_id", sa.String(length=40), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target_kind", sa.String(length=32), nullable=False),
        sa.Column("target_id", sa.String(length=128), nullable=False),
        sa.Column("target_revision", sa.BigInteger(), nullable=False),
        sa.Column("principal_id", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "sequence", name=op.f("pk_audit_receipts")),
        sa.UniqueConstraint("receipt_id", name=op.f("uq_audit_receipts_receipt_id")),
    )
    with op.batch_alter_table("audit_receipts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_audit_receipts_target", ["tenant_id", "target_id", "sequence"], unique=False
        )

    op.create_table(
        "events",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "sequence", name=op.f("pk_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_events_event_id")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_at", ["at_us"], unique=False)

    op.create_table(
        "tenant_state",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("event_sequence", sa.BigInteger(), nullable=False),
        sa.Column("events_compacted_through", sa.BigInteger(), nullable=False),
        sa.Column("receipt_sequence", sa.BigInteger(), nullable=False),
        sa.Column("receipt_head_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_tenant_state")),
    )
    op.create_table(
        "thread_modes",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("thread_id", sa.String(length=128), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("effective_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "thread_id", name=op.f("pk_thread_modes")),
    )


def downgrade() -> None:
    op.drop_table("thread_modes")
    op.drop_table("tenant_state")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_at")

    op.drop_table("events")
    with op.batch_alter_table("audit_receipts", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_receipts_target")

    op.drop_table("audit_receipts")
