"""the embedding outbox holds one place per source, with its failures

A source queued again while it waits (an append, an approval) keeps its one place
(`ux_vector_outbox_source_pk`): the indexer embeds whatever entries it lacks when it takes
it, so the places an append made beside an earlier one are merged here, keeping the
oldest. `attempts`, `failed_at_us` and `last_error` (an exception's type name, never text)
record an item's failures; `not_before_us` holds it back until its back-off has passed, so
one item that keeps failing never blocks the others.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "DELETE FROM vector_outbox WHERE seq NOT IN "
        "(SELECT min(seq) FROM vector_outbox GROUP BY source_pk)"
    )
    with op.batch_alter_table("vector_outbox") as batch:
        batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("not_before_us", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("failed_at_us", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("last_error", sa.String(length=64), nullable=False, server_default="")
        )
        batch.create_index("ux_vector_outbox_source_pk", ["source_pk"], unique=True)
        batch.create_index("ix_vector_outbox_tenant", ["tenant_id", "seq"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("vector_outbox") as batch:
        batch.drop_index("ix_vector_outbox_tenant")
        batch.drop_index("ux_vector_outbox_source_pk")
        for column in ("last_error", "failed_at_us", "not_before_us", "attempts", "version"):
            batch.drop_column(column)
