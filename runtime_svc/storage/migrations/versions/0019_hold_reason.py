"""hold reason: why a memory was held for review by what it says

`sources.hold_reason`: set when the memory's text read as instructions to the model
(`instruction_like`) and it was stored pending review instead of being served; empty
otherwise. It stays after a review, so the memory's history says why it was held.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "sources",
        sa.Column("hold_reason", sa.String(length=32), nullable=False, server_default=""),
    )


def downgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("hold_reason")
