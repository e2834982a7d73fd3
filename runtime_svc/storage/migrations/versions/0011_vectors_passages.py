"""vectors per passage: one vector per search index entry (a conversation's passages)

`memory_vectors` is re-keyed: a row per (source, passage, model), where `passage` is the low
bits of the entry's key (0: a whole-text entry; see `runtime_svc.domain.passages`), with
`seq` growing with every vector stored (the coarse pass reads what was added since it last
looked). Existing vectors are dropped: the runtime queues every indexed source without a
vector of its model when it starts with hybrid retrieval on, so they are embedded again, per
passage, in the background (until then those sources are ranked by their words).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Embedding = sa.LargeBinary().with_variant(postgresql.ARRAY(postgresql.REAL()), "postgresql")


def _create(per_passage: bool) -> None:
    columns: list[sa.schema.SchemaItem] = [
        sa.Column("source_pk", sa.BigInteger(), nullable=False),
        sa.Column("model_id", sa.String(length=200), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("source_revision", sa.BigInteger(), nullable=False),
        sa.Column("dimension", sa.Integer(), nullable=False),
        sa.Column("embedding", Embedding, nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
    ]
    if per_passage:
        op.create_table(
            "memory_vectors",
            sa.Column("seq", RowId, autoincrement=True, nullable=False),
            sa.Column("passage", sa.Integer(), nullable=False),
            *columns,
            sa.PrimaryKeyConstraint("seq", name=op.f("pk_memory_vectors")),
            sqlite_autoincrement=True,
        )
        with op.batch_alter_table("memory_vectors", schema=None) as batch_op:
            batch_op.create_index(
                "ux_memory_vectors_entry", ["source_pk", "passage", "model_id"], unique=True
            )
            batch_op.create_index(
                "ix_memory_vectors_scan", ["tenant_id", "model_id", "seq"], unique=False
            )
            batch_op.create_index(
                "ix_memory_vectors_source", ["tenant_id", "source_id"], unique=False
            )
        return
    op.create_table(
        "memory_vectors",
        *columns,
        sa.PrimaryKeyConstraint("source_pk", "model_id", name=op.f("pk_memory_vectors")),
    )
    with op.batch_alter_table("memory_vectors", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_vectors_scan",
            ["tenant_id", "model_id", "source_pk", "signature"],
            unique=False,
        )
        batch_op.create_index("ix_memory_vectors_source", ["tenant_id", "source_id"], unique=False)


def upgrade() -> None:
    op.drop_table("memory_vectors")
    _create(per_passage=True)


def downgrade() -> None:
    op.drop_table("memory_vectors")
    _create(per_passage=False)
