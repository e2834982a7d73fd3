"""sources, search index, prompt records, derived provenance

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

SHARDS = 16  # fixed for this schema version (runtime_svc.storage.search_index.SHARDS)

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "derived_provenance",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("derived_kind", sa.String(length=32), nullable=False),
        sa.Column("derived_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("source_revision", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id",
            "derived_kind",
            "derived_id",
            "source_id",
            name=op.f("pk_derived_provenance"),
        ),
    )
    with op.batch_alter_table("derived_provenance", schema=None) as batch_op:
        batch_op.create_index(
            "ix_derived_provenance_source", ["tenant_id", "source_id"], unique=False
        )

    op.create_table(
        "prompt_records",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("prompt_record_id", sa.String(length=40), nullable=False),
        sa.Column("thread_id", sa.String(length=128), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("token_budget", sa.BigInteger(), nullable=False),
        sa.Column("tokens_used", sa.BigInteger(), nullable=False),
        sa.Column("query_sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "prompt_record_id", name=op.f("pk_prompt_records")),
    )
    op.create_table(
        "sources",
        sa.Column(
            "pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("classification", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("thread_id", sa.String(length=128), nullable=False),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("generated_form", sa.Text(), nullable=False),
        sa.Column("generated_revision", sa.BigInteger(), nullable=False),
        sa.Column("indexed_revision", sa.BigInteger(), nullable=False),
        sa.Column("principal_id", sa.String(length=128), nullable=False),
        sa.Column("principal_kind", sa.String(length=16), nullable=False),
        sa.Column("surface", sa.String(length=16), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("save_intent", sa.String(length=32), nullable=False),
        sa.Column("save_intent_source", sa.String(length=64), nullable=False),
        sa.Column("save_intent_evidence", sa.String(length=200), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("updated_at_us", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at_us", sa.BigInteger(), nullable=False),
        sa.Column("assent_state", sa.String(length=16), nullable=False),
        sa.Column("assent_expires_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_sources")),
        sa.UniqueConstraint("tenant_id", "source_id", name=op.f("uq_sources_tenant_id")),
    )
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.create_index(
            "ix_sources_request",
            ["tenant_id", "request_id"],
            unique=True,
            sqlite_where=sa.text("request_id != ''"),
            postgresql_where=sa.text("request_id != ''"),
        )

    with op.batch_alter_table("tenant_state", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("indexed_docs", sa.BigInteger(), server_default="0", nullable=False)
        )

    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE INDEX ix_sources_fts ON sources "
            "USING gin (to_tsvector('english', generated_form))"
        )
    if op.get_bind().dialect.name == "sqlite":
        # The search index, in 16 shards by tenant: rowid = sources.pk. `body` is the generated
        # form; `scope` holds the tenant's token, plus its eligibility token while the source is
        # eligible.
        for i in range(SHARDS):
            name = f"memory_index_{i:02d}"
            op.execute(
                f"CREATE VIRTUAL TABLE {name} USING fts5("
                "body, scope, tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            op.execute(f"CREATE VIRTUAL TABLE {name}_vocab USING fts5vocab({name}, 'row')")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for i in range(SHARDS):
            op.execute(f"DROP TABLE memory_index_{i:02d}_vocab")
            op.execute(f"DROP TABLE memory_index_{i:02d}")
    with op.batch_alter_table("tenant_state", schema=None) as batch_op:
        batch_op.drop_column("indexed_docs")

    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_sources_request",
            sqlite_where=sa.text("request_id != ''"),
            postgresql_where=sa.text("request_id != ''"),
        )

    op.drop_table("sources")
    op.drop_table("prompt_records")
    with op.batch_alter_table("derived_provenance", schema=None) as batch_op:
        batch_op.drop_index("ix_derived_provenance_source")

    op.drop_table("derived_provenance")
