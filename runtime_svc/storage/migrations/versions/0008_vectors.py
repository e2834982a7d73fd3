"""vectors for hybrid retrieval: the embedding outbox and the vectors themselves

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Embedding = sa.LargeBinary().with_variant(postgresql.ARRAY(postgresql.REAL()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "vector_outbox",
        sa.Column("seq", RowId, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("source_pk", sa.BigInteger(), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("enqueued_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_vector_outbox")),
    )
    with op.batch_alter_table("vector_outbox", schema=None) as batch_op:
        batch_op.create_index("ix_vector_outbox_source", ["tenant_id", "source_id"], unique=False)
    op.create_table(
        "memory_vectors",
        sa.Column("source_pk", sa.BigInteger(), nullable=False),
        sa.Column("model_id", sa.String(length=200), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("source_revision", sa.BigInteger(), nullable=False),
        sa.Column("dimension", sa.Integer(), nullable=False),
        sa.Column("embedding", Embedding, nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("source_pk", "model_id", name=op.f("pk_memory_vectors")),
    )
    with op.batch_alter_table("memory_vectors", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_vectors_scan",
            ["tenant_id", "model_id", "source_pk", "signature"],
            unique=False,
        )
        batch_op.create_index("ix_memory_vectors_source", ["tenant_id", "source_id"], unique=False)


def downgrade() -> None:
    op.drop_table("memory_vectors")
    op.drop_table("vector_outbox")
