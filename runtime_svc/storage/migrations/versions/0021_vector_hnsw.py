"""vector index: pgvector HNSW indexes for large tenants' semantic search

PostgreSQL with the pgvector extension (0.5 or later) only; elsewhere nothing. One partial
index per common dimension over the stored `real[]` cast to `vector(d)` (cosine distance),
`ix_memory_vectors_hnsw_<d>`: a large tenant's nearest vectors are found through it, the
tenant and eligibility filters inside the index scan (`runtime_svc.retrieval.vectors.pg_hnsw`).
As the runtime does when hybrid retrieval starts, the extension is created when the server
has it and it is not created yet; when it cannot be, this migration does nothing (the runtime
then searches by words only, or ranks vectors exactly if the extension comes later). It follows
the session entry keys (0020), which rewrite every stored vector's passage: before it, each
rewrite would also have been written into these indexes.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

DIMENSIONS = (384, 768, 1024, 1536)  # as `runtime_svc.retrieval.vectors.pg_hnsw.DIMENSIONS`


def _has_hnsw() -> bool:
    """Whether the vector extension is there (created here if the server has it), with the
    HNSW access method."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    version = bind.exec_driver_sql(
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
    ).scalar()
    if version is None:
        if not bind.exec_driver_sql(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).first():
            return False
        try:
            with bind.begin_nested():
                bind.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception:
            return False
    return bool(bind.exec_driver_sql("SELECT 1 FROM pg_am WHERE amname = 'hnsw'").first())


def upgrade() -> None:
    if not _has_hnsw():
        return
    for d in DIMENSIONS:
        op.execute(
            f"CREATE INDEX IF NOT EXISTS ix_memory_vectors_hnsw_{d} ON memory_vectors "
            f"USING hnsw ((embedding::vector({d})) vector_cosine_ops) WHERE dimension = {d}"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for d in DIMENSIONS:
        op.execute(f"DROP INDEX IF EXISTS ix_memory_vectors_hnsw_{d}")
