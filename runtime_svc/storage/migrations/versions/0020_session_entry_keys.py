"""session entry keys: a passage's message range in 24 low bits of its entry key

A search index entry's key was `source pk << 16` with the passage's first message and last
message + 1 in 8 bits each (a conversation of at most 254 messages). It becomes
`source pk << 24` with the first message in 18 bits and the passage's length in 6 (see
`runtime_svc.domain.entry_keys`), so a session grown by appends can hold thousands of
messages. Postings are re-keyed and vectors' `passage` (the key's low bits) re-encoded in
place: every entry and vector stays, readable under the new layout.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def _new_low(low: str) -> str:
    """The new low bits from the old ones (0 stays 0): first * 64 + (last - first + 1)."""
    first, end = f"({low} / 256)", f"({low} % 256)"
    return f"CASE WHEN {low} = 0 THEN 0 ELSE {first} * 64 + {end} - {first} END"


def _old_low(low: str) -> str:
    first, span = f"({low} / 64)", f"({low} % 64)"
    return f"CASE WHEN {low} = 0 THEN 0 ELSE {first} * 256 + {first} + {span} END"


def upgrade() -> None:
    # Through negative values, so no key meets another on the way (keys are unique).
    new_key = f"(pk / 65536) * 16777216 + {_new_low('(pk % 65536)')}"
    op.execute(f"UPDATE search_postings SET pk = -({new_key}) - 1")
    op.execute("UPDATE search_postings SET pk = -(pk + 1)")
    op.execute(f"UPDATE memory_vectors SET passage = -({_new_low('passage')}) - 1")
    op.execute("UPDATE memory_vectors SET passage = -(passage + 1)")


def downgrade() -> None:
    # Passages the old layout cannot name (from message 255 on) go with their vectors.
    op.execute("DELETE FROM memory_vectors WHERE passage / 64 + passage % 64 > 255")
    op.execute("DELETE FROM search_postings WHERE (pk % 16777216) / 64 + pk % 64 > 255")
    old_key = f"(pk / 16777216) * 65536 + {_old_low('(pk % 16777216)')}"
    op.execute(f"UPDATE search_postings SET pk = -({old_key}) - 1")
    op.execute("UPDATE search_postings SET pk = -(pk + 1)")
    op.execute(f"UPDATE memory_vectors SET passage = -({_old_low('passage')}) - 1")
    op.execute("UPDATE memory_vectors SET passage = -(passage + 1)")
    op.execute("DELETE FROM search_terms")
    op.execute(
        "INSERT INTO search_terms (tenant_id, term, docs, eligible_docs, max_impact) "
        "SELECT tenant_id, term, COUNT(*), SUM(eligible), MAX(impact) FROM search_postings "
        "GROUP BY tenant_id, term"
    )
