"""passages: search index entries keyed by source and message range

Each entry's key becomes `source pk << 16` (a whole-text entry; see
`runtime_svc.domain.passages.entry_key`), leaving the low bits for the message range of a
conversation's passages. Conversations indexed before keep their one whole-text entry.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Through negative keys, so no key meets an old one on the way (the key is unique).
    op.execute("UPDATE search_postings SET pk = -(pk * 65536) - 1")
    op.execute("UPDATE search_postings SET pk = -(pk + 1)")


def downgrade() -> None:
    # Passages go (only whole-text entries existed before); word counts are recounted.
    op.execute("DELETE FROM search_postings WHERE pk % 65536 <> 0")
    op.execute("UPDATE search_postings SET pk = -(pk / 65536) - 1")
    op.execute("UPDATE search_postings SET pk = -(pk + 1)")
    op.execute("DELETE FROM search_terms")
    op.execute(
        "INSERT INTO search_terms (tenant_id, term, docs, max_impact) "
        "SELECT tenant_id, term, COUNT(*), MAX(impact) FROM search_postings "
        "GROUP BY tenant_id, term"
    )
