"""search stamps: when each index entry last changed (for postings held in memory)

`tenant_state.index_stamp` counts the changes of a tenant's index entries (their postings or
their eligibility); `search_postings.stamp` holds, on the row that marks an entry (the empty
word), the stamp of the change that last wrote it. A process holding a tenant's postings in
memory (`runtime_svc.retrieval.held.held_postings`) reads the entries changed since it last looked
through the partial index below. Entries written before this revision have no stamp and are
read when a tenant's postings are first loaded.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "tenant_state",
        sa.Column("index_stamp", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.add_column("search_postings", sa.Column("stamp", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_search_postings_stamp",
        "search_postings",
        ["tenant_id", "stamp"],
        sqlite_where=sa.text("term = ''"),
        postgresql_where=sa.text("term = ''"),
    )


def downgrade() -> None:
    op.drop_index("ix_search_postings_stamp", table_name="search_postings")
    with op.batch_alter_table("search_postings") as batch:
        batch.drop_column("stamp")
    with op.batch_alter_table("tenant_state") as batch:
        batch.drop_column("index_stamp")
