"""a partial erasure's receipt counts what it erased

`audit_receipts` gains `turns_erased` and `messages_erased`: the turns one principal
appended to a conversation, and their messages, that an erasure of those turns alone took
(EraseSource with appended_by). Hashed only when set, so every receipt stored before keeps
its hash.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("audit_receipts") as batch:
        for column in ("turns_erased", "messages_erased"):
            batch.add_column(sa.Column(column, sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("audit_receipts") as batch:
        for column in ("messages_erased", "turns_erased"):
            batch.drop_column(column)
