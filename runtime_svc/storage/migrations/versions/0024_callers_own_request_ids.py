"""a request id is its caller's; an appended turn records who appended it

`ix_sources_request` and `ix_source_turns_request` become unique per (tenant, principal,
request id): another principal's replay of an id is a request of its own, never the first
caller's result. `source_turns` gains the appender (`principal_id`, `principal_kind`) and
the save intent its append claimed; turns stored before this record the conversation's
inserter, as they were attributed until now.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

_SET = sa.text("request_id != ''")  # partial: only rows with an id


def _index(table: str, columns: list[str]) -> None:
    op.create_index(
        f"ix_{table}_request",
        table,
        columns,
        unique=True,
        sqlite_where=_SET,
        postgresql_where=_SET,
    )


def upgrade() -> None:
    with op.batch_alter_table("source_turns") as batch:
        batch.add_column(
            sa.Column("principal_id", sa.String(length=128), nullable=False, server_default="")
        )
        batch.add_column(
            sa.Column("principal_kind", sa.String(length=16), nullable=False, server_default="")
        )
        batch.add_column(
            sa.Column("save_intent", sa.String(length=32), nullable=False, server_default="")
        )
    op.execute(
        "UPDATE source_turns SET principal_id = (SELECT s.principal_id FROM sources s "
        "WHERE s.pk = source_turns.source_pk), principal_kind = (SELECT s.principal_kind "
        "FROM sources s WHERE s.pk = source_turns.source_pk)"
    )
    op.drop_index("ix_source_turns_request", table_name="source_turns")
    _index("source_turns", ["tenant_id", "principal_id", "request_id"])
    op.drop_index("ix_sources_request", table_name="sources")
    _index("sources", ["tenant_id", "principal_id", "request_id"])


def downgrade() -> None:
    op.drop_index("ix_sources_request", table_name="sources")
    _index("sources", ["tenant_id", "request_id"])
    op.drop_index("ix_source_turns_request", table_name="source_turns")
    _index("source_turns", ["tenant_id", "request_id"])
    with op.batch_alter_table("source_turns") as batch:
        for column in ("save_intent", "principal_kind", "principal_id"):
            batch.drop_column(column)
