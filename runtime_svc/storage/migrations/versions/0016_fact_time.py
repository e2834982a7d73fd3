"""fact time: when a memory was true, and the interval chains of facts

`sources.observed_at_us`: when the content was said or true (existing sources: when they were
received). On `facts`: when the statement was made (`valid_from_us`, existing facts: their
source's time), whether it says a value ended, its attribute's value key, the sentence it
was read from, a retraction, and its place in its attribute's chain (`opens`,
`valid_to_us`, `superseded_by`, `supersedes`), computed here for existing facts by the same
pure function the runtime uses (`runtime_svc.domain.fact_chains`).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa
from alembic import op

from runtime_svc.domain import attributes, eligibility, fact_chains

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_FACT_COLUMNS = (
    ("sentence_start", sa.Integer(), None),
    ("sentence_end", sa.Integer(), None),
    ("valid_from_us", sa.BigInteger(), "0"),
    ("ends", sa.Integer(), "0"),
    ("object_key", sa.String(256), ""),
    ("retracted_at_us", sa.BigInteger(), "0"),
    ("opens", sa.Integer(), "0"),
    ("valid_to_us", sa.BigInteger(), "0"),
    ("superseded_by", sa.String(40), ""),
    ("superseded_by_source", sa.String(40), ""),
    ("supersedes", sa.String(40), ""),
)


def upgrade() -> None:
    op.add_column(
        "sources",
        sa.Column("observed_at_us", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute("UPDATE sources SET observed_at_us = created_at_us")
    for name, type_, default in _FACT_COLUMNS:
        op.add_column(
            "facts",
            sa.Column(name, type_, nullable=default is None, server_default=default),
        )
    op.create_index(
        "ix_facts_attribute", "facts", ["tenant_id", "subject", "predicate", "object_key"]
    )
    op.create_index("ix_facts_superseded_by_source", "facts", ["tenant_id", "superseded_by_source"])
    _chain_existing_facts()


def _chain_existing_facts() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT f.pk, f.tenant_id, f.fact_id, f.source_id, f.subject, f.predicate, f.object, "
            "s.created_at_us, s.classification, s.status, s.revoked_at_us, s.assent_state, "
            "s.assent_expires_at_us FROM facts f JOIN sources s "
            "ON s.tenant_id = f.tenant_id AND s.source_id = f.source_id"
        )
    ).mappings()
    chains: dict[tuple[str, attributes.AttributeKey], list[fact_chains.Statement]] = defaultdict(
        list
    )
    updates: dict[str, dict[str, object]] = {}
    for r in rows:
        key = attributes.key(r["subject"], r["predicate"], r["object"])
        live = eligibility.eligible_regardless_of_time(dict(r))
        chains[(r["tenant_id"], key)].append(
            fact_chains.Statement(
                r["fact_id"],
                attributes.value_key(r["object"]),
                r["created_at_us"],
                r["pk"],
                live=live,
                source_id=r["source_id"],
            )
        )
        updates[r["fact_id"]] = {
            "pk": r["pk"],
            "valid_from_us": r["created_at_us"],
            "object_key": key.value,
        }
    for statements in chains.values():
        for fact_id, link in fact_chains.chain(statements).items():
            updates[fact_id] |= {
                "opens": int(link.opens),
                "valid_to_us": link.valid_to_us,
                "superseded_by": link.superseded_by,
                "superseded_by_source": link.superseded_by_source,
                "supersedes": link.supersedes,
            }
    if updates:
        conn.execute(
            sa.text(
                "UPDATE facts SET valid_from_us = :valid_from_us, object_key = :object_key, "
                "opens = :opens, valid_to_us = :valid_to_us, superseded_by = :superseded_by, "
                "superseded_by_source = :superseded_by_source, supersedes = :supersedes "
                "WHERE pk = :pk"
            ),
            list(updates.values()),
        )


def downgrade() -> None:
    op.drop_index("ix_facts_superseded_by_source", table_name="facts")
    op.drop_index("ix_facts_attribute", table_name="facts")
    with op.batch_alter_table("facts") as batch:
        for name, _, _ in reversed(_FACT_COLUMNS):
            batch.drop_column(name)
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("observed_at_us")
