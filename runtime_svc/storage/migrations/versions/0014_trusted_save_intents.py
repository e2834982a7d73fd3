"""trusted save intents: a held claim on its source and on its insert receipt

`sources.save_intent_held`: the save intent an insert claimed was not one its credential is
trusted for, so the memory was stored pending review. `audit_receipts.save_intent` and
`save_intent_held`: what an insert's receipt records of that claim (hashed only when set,
so receipts chained before keep their hashes).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "sources",
        sa.Column("save_intent_held", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "audit_receipts",
        sa.Column("save_intent", sa.String(length=32), nullable=False, server_default=""),
    )
    op.add_column(
        "audit_receipts",
        sa.Column("save_intent_held", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("audit_receipts") as batch:
        batch.drop_column("save_intent_held")
        batch.drop_column("save_intent")
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("save_intent_held")
