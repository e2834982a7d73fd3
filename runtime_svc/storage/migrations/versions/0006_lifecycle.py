"""one source lifecycle: purge residue of revoked and erased sources, physical erasure

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30

Databases written by earlier releases may hold derived records of revoked or erased sources
(an approval after a revocation re-derived the index entry and facts), hashes of erased
content, and counters that drifted on PostgreSQL. This migration purges the residue,
recounts, rebuilds the SQLite fact index with the source id beside each row (so the lifecycle
can find a source's rows through the index itself), and turns on FTS5 secure-delete.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

SHARDS = 16
FTS_OPTIONS = "tokenize = 'porter unicode61 remove_diacritics 2'"


def _shard(tenant_id: str) -> int:
    return int(hashlib.sha256(tenant_id.encode()).hexdigest()[:8], 16) % SHARDS


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    ended = bind.execute(
        sa.text(
            "SELECT pk, tenant_id, source_id FROM sources "
            "WHERE revoked_at_us > 0 OR erased_at_us > 0"
        )
    ).all()
    for pk, tenant_id, source_id in ended:
        params = {"pk": pk, "tenant": tenant_id, "source": source_id}
        if sqlite:
            bind.execute(
                sa.text(f"DELETE FROM memory_index_{_shard(tenant_id):02d} WHERE rowid = :pk"),
                params,
            )
            bind.execute(
                sa.text(
                    "DELETE FROM fact_index WHERE rowid IN (SELECT pk FROM facts "
                    "WHERE tenant_id = :tenant AND source_id = :source)"
                ),
                params,
            )
        bind.execute(
            sa.text("DELETE FROM facts WHERE tenant_id = :tenant AND source_id = :source"), params
        )
        cited = sa.text(
            "SELECT derived_id FROM derived_provenance WHERE tenant_id = :tenant "
            "AND derived_kind = 'prompt_record' AND source_id = :source"
        )
        for (record_id,) in bind.execute(cited, params).all():
            p = {"tenant": tenant_id, "record": record_id}
            bind.execute(
                sa.text(
                    "DELETE FROM derived_provenance WHERE tenant_id = :tenant "
                    "AND derived_kind = 'prompt_record' AND derived_id = :record"
                ),
                p,
            )
            bind.execute(
                sa.text(
                    "DELETE FROM prompt_records WHERE tenant_id = :tenant "
                    "AND prompt_record_id = :record"
                ),
                p,
            )
        bind.execute(
            sa.text(
                "UPDATE sources SET generated_form = '', generated_revision = 0, "
                "indexed_revision = 0 WHERE pk = :pk"
            ),
            params,
        )
    # Erased: no byte of the content and no hash of it.
    bind.execute(
        sa.text(
            "UPDATE sources SET raw = '', content_sha256 = '', labels = '{}', "
            "save_intent_evidence = '', review_note = '', generated_form = '' "
            "WHERE erased_at_us > 0"
        )
    )
    # The counter of index entries, recounted from the entries themselves.
    bind.execute(
        sa.text(
            "UPDATE tenant_state SET indexed_docs = (SELECT count(*) FROM sources "
            "WHERE sources.tenant_id = tenant_state.tenant_id AND sources.indexed_revision > 0)"
        )
    )
    if sqlite:
        op.execute(f"CREATE VIRTUAL TABLE fact_index_new USING fts5(statement, src, {FTS_OPTIONS})")
        op.execute(
            "INSERT INTO fact_index_new(rowid, statement, src) "
            "SELECT pk, statement, source_id FROM facts"
        )
        op.execute("DROP TABLE fact_index")
        op.execute("ALTER TABLE fact_index_new RENAME TO fact_index")
        for name in ["fact_index"] + [f"memory_index_{i:02d}" for i in range(SHARDS)]:
            op.execute(f"INSERT INTO {name}({name}, rank) VALUES ('secure-delete', 1)")
            # Rewrites the segments: words of rows deleted before secure-delete leave them.
            op.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE fact_index")
        op.execute(f"CREATE VIRTUAL TABLE fact_index USING fts5(statement, {FTS_OPTIONS})")
        op.execute("INSERT INTO fact_index(rowid, statement) SELECT pk, statement FROM facts")
