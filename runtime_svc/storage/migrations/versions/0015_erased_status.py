"""erased status, newest-first listings: an erased source's status is `erased`, and sources
are listed newest first through an index on their creation time

Erasure now records the tombstone in the review status column (`erased`), so listings,
filters and the eligibility predicate read an erased source as erased, never as revoked;
sources erased before this revision get it here. Listings (ListSources, ListMemories) go
newest first by (created_at_us, source_id), which `ix_sources_created` serves per tenant.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE sources SET status = 'erased' WHERE erased_at_us > 0")
    op.create_index("ix_sources_created", "sources", ["tenant_id", "created_at_us", "source_id"])


def downgrade() -> None:
    op.drop_index("ix_sources_created", table_name="sources")
    # Before this revision an erased source kept the review status it had (active, as a
    # rule): the revocation it carries already keeps it out of every read.
    op.execute("UPDATE sources SET status = 'active' WHERE status = 'erased'")
