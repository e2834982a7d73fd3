"""each appended turn records the trust its append was given

`source_turns` gains `save_intent_held` (the claimed save intent was not one the
appender's credential is trusted for), `held` (this append held the conversation for
review: the insert policy, the claim, or its text) and `hold_reason` ("instruction_like").
Turns stored before record none: it was not kept per turn.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("source_turns") as batch:
        for column in ("save_intent_held", "held"):
            batch.add_column(
                sa.Column(column, sa.Boolean(), nullable=False, server_default=sa.false())
            )
        batch.add_column(
            sa.Column("hold_reason", sa.String(length=32), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("source_turns") as batch:
        for column in ("hold_reason", "held", "save_intent_held"):
            batch.drop_column(column)
