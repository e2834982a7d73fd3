"""eligible statistics: ranking counts eligible index entries only

`search_terms.eligible_docs` counts, per tenant and word, the eligible index entries holding
the word (the empty word's row: the tenant's eligible entries). Scores are computed from it,
so a cold source (or any source whose entry is not eligible) moves no other source's score.
Filled from the postings as they stand.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "search_terms",
        sa.Column("eligible_docs", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute(
        """
        UPDATE search_terms SET eligible_docs = (
            SELECT count(*) FROM search_postings p
            WHERE p.tenant_id = search_terms.tenant_id
              AND p.term = search_terms.term
              AND p.eligible = 1
        )
        """
    )


def downgrade() -> None:
    with op.batch_alter_table("search_terms") as batch:
        batch.drop_column("eligible_docs")
