"""words removed: when a tenant's index last lost a word (for postings held in memory)

`tenant_state.words_removed_at` is the index stamp of the last change that removed a word
from the tenant's index (a purge or erasure took the last entry holding it). A process
holding the tenant's postings in memory (`runtime_svc.retrieval.held.held_postings`) sees it move
past what it holds and forgets the words the index no longer has, so no erased word stays
in any runtime's memory.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "tenant_state",
        sa.Column("words_removed_at", sa.BigInteger(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    with op.batch_alter_table("tenant_state") as batch:
        batch.drop_column("words_removed_at")
