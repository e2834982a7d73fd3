"""facts

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "facts",
        sa.Column(
            "pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("fact_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("source_revision", sa.BigInteger(), nullable=False),
        sa.Column("subject", sa.String(length=128), nullable=False),
        sa.Column("predicate", sa.String(length=64), nullable=False),
        sa.Column("object", sa.String(length=256), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("confidence_reason", sa.String(length=128), nullable=False),
        sa.Column("save_intent", sa.String(length=32), nullable=False),
        sa.Column("save_intent_source", sa.String(length=64), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_facts")),
        sa.UniqueConstraint("tenant_id", "fact_id", name=op.f("uq_facts_tenant_id")),
    )
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.create_index("ix_facts_source", ["tenant_id", "source_id"], unique=False)

    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE INDEX ix_facts_fts ON facts USING gin (to_tsvector('english', statement))"
        )
    if op.get_bind().dialect.name == "sqlite":
        # Full-text index of fact statements: rowid = facts.pk.
        op.execute(
            "CREATE VIRTUAL TABLE fact_index USING fts5("
            "statement, tokenize = 'porter unicode61 remove_diacritics 2')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE fact_index")
    with op.batch_alter_table("facts", schema=None) as batch_op:
        batch_op.drop_index("ix_facts_source")

    op.drop_table("facts")
