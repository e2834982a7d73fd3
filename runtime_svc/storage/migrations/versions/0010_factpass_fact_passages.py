"""fact passages: the conversation's passage a fact was stated in

Two nullable columns on `facts`: the message range of the passage (as the passage index
names it). Facts stored before keep NULL: no passage.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("passage_start", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("passage_end", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.drop_column("passage_end")
        batch_op.drop_column("passage_start")
