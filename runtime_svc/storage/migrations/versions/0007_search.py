"""search index as postings with per-tenant statistics

Replaces the FTS5 shards (SQLite) and the expression GIN index (PostgreSQL) with the
`search_postings` and `search_terms` tables, filled from the indexed sources.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from runtime_svc.domain import eligibility, lexical

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

SHARDS = 16  # the FTS5 shards of 0002


def upgrade() -> None:
    op.create_table(
        "search_postings",
        sa.Column("pk", sa.BigInteger(), nullable=False),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("eligible", sa.Integer(), nullable=False),
        sa.Column("impact", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint(
            "pk", "term", name=op.f("pk_search_postings"), postgresql_include=["impact"]
        ),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_search_postings_impact",
        "search_postings",
        ["tenant_id", "term", "eligible", "impact"],
    )
    op.create_table(
        "search_terms",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("docs", sa.BigInteger(), nullable=False),
        sa.Column("max_impact", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "term", name=op.f("pk_search_terms")),
        sqlite_with_rowid=False,
    )
    _fill()
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for i in range(SHARDS):
            op.execute(f"DROP TABLE IF EXISTS memory_index_{i:02d}_vocab")
            op.execute(f"DROP TABLE IF EXISTS memory_index_{i:02d}")
    else:
        op.execute("DROP INDEX IF EXISTS ix_sources_fts")


def _fill() -> None:
    """Entries for every source that has one, as the runtime writes them."""
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT pk, tenant_id, generated_form, classification, status, revoked_at_us, "
            "assent_state, assent_expires_at_us FROM sources WHERE indexed_revision > 0"
        )
    ).mappings()
    postings: list[dict[str, Any]] = []
    stats: dict[tuple[str, str], list[Any]] = {}
    for r in rows:
        entry = lexical.analyse(r["generated_form"])
        ok = int(eligibility.eligible_regardless_of_time(dict(r)))
        for term, weight in {"": float(entry.length), **entry.impacts}.items():
            postings.append(
                {
                    "pk": r["pk"],
                    "term": term,
                    "tenant_id": r["tenant_id"],
                    "eligible": ok,
                    "impact": weight,
                }
            )
            s = stats.setdefault((r["tenant_id"], term), [0, 0.0])
            s[0] += 1
            s[1] = max(s[1], weight)
    if postings:
        bind.execute(
            sa.text(
                "INSERT INTO search_postings (pk, term, tenant_id, eligible, impact) "
                "VALUES (:pk, :term, :tenant_id, :eligible, :impact)"
            ),
            postings,
        )
    if stats:
        bind.execute(
            sa.text(
                "INSERT INTO search_terms (tenant_id, term, docs, max_impact) "
                "VALUES (:tenant_id, :term, :docs, :max_impact)"
            ),
            [
                {"tenant_id": t, "term": w, "docs": n, "max_impact": m}
                for (t, w), (n, m) in stats.items()
            ],
        )


def downgrade() -> None:
    """Back to empty FTS5 shards / the GIN index (entries are not rebuilt)."""
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for i in range(SHARDS):
            name = f"memory_index_{i:02d}"
            op.execute(
                f"CREATE VIRTUAL TABLE {name} USING fts5("
                "body, scope, tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            op.execute(f"CREATE VIRTUAL TABLE {name}_vocab USING fts5vocab({name}, 'row')")
    else:
        op.execute(
            "CREATE INDEX ix_sources_fts ON sources "
            "USING gin (to_tsvector('english', generated_form))"
        )
    op.drop_table("search_terms")
    op.drop_index("ix_search_postings_impact", table_name="search_postings")
    op.drop_table("search_postings")
