"""source turns: a conversation's appended messages in rows of their own

An append used to rewrite the source row's `raw` (and its hash and generated form) with the
whole conversation, so each turn cost as much as the session had grown. From here the row
keeps the messages the conversation was inserted with, and each append adds one
`source_turns` row holding only its messages (JSON, in the stored form `raw` uses; the
whole conversation is `raw` followed by its turn rows, byte for byte what one array of all
its messages is). The row keeps the conversation's size: `message_count`, `content_chars`,
the first `sent_at` given (`first_sent_at_us`), and how many turn rows it has
(`turn_rows`). A turn row also keeps the append's `request_id` (a retry returns its first
result) and the revision it made.

Existing conversations (appended ones included) keep every message in `raw`, as the first
part of the conversation: their size columns are computed here from it.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-03
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_SIZES = ("message_count", "content_chars", "first_sent_at_us", "turn_rows")
_BATCH = 500


def upgrade() -> None:
    for name in _SIZES:
        op.add_column(
            "sources", sa.Column(name, sa.BigInteger(), nullable=False, server_default="0")
        )
    row_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "source_turns",
        sa.Column("pk", row_id, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("source_pk", sa.BigInteger(), nullable=False),
        sa.Column("first_message", sa.BigInteger(), nullable=False),
        sa.Column("rows", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False, server_default=""),
    )
    op.create_index(
        "ix_source_turns_source", "source_turns", ["source_pk", "first_message"], unique=True
    )
    op.create_index("ix_source_turns_tenant", "source_turns", ["tenant_id"])
    op.create_index(
        "ix_source_turns_request",
        "source_turns",
        ["tenant_id", "request_id"],
        unique=True,
        sqlite_where=sa.text("request_id != ''"),
        postgresql_where=sa.text("request_id != ''"),
    )
    _sizes()


def _sizes() -> None:
    """Each stored conversation's size, from its messages (a batch of rows at a time)."""
    bind = op.get_bind()
    after = 0
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT pk, raw FROM sources WHERE kind = 'conversation' AND raw != '' "
                "AND pk > :after ORDER BY pk LIMIT :n"
            ),
            {"after": after, "n": _BATCH},
        ).all()
        if not rows:
            return
        values = []
        for pk, raw in rows:
            messages = json.loads(raw)
            sent = next((m[3] for m in messages if len(m) > 3 and m[3]), 0)
            chars = sum(len(m[1]) for m in messages)
            values.append({"pk": pk, "n": len(messages), "chars": chars, "sent": sent})
        bind.execute(
            sa.text(
                "UPDATE sources SET message_count = :n, content_chars = :chars, "
                "first_sent_at_us = :sent WHERE pk = :pk"
            ),
            values,
        )
        after = rows[-1][0]


def downgrade() -> None:
    """Each conversation's appended messages back into its row (the layout before)."""
    bind = op.get_bind()
    turns = bind.execute(
        sa.text("SELECT source_pk, rows FROM source_turns ORDER BY source_pk, first_message")
    ).all()
    by_source: dict[int, list[str]] = {}
    for pk, rows in turns:
        by_source.setdefault(pk, []).append(rows)
    for pk, parts in by_source.items():
        raw = bind.execute(sa.text("SELECT raw FROM sources WHERE pk = :pk"), {"pk": pk}).scalar()
        whole = json.dumps(
            json.loads(raw or "[]") + [m for part in parts for m in json.loads(part)],
            ensure_ascii=False,
        )
        bind.execute(
            sa.text("UPDATE sources SET raw = :raw, content_sha256 = :sha WHERE pk = :pk"),
            {"raw": whole, "sha": hashlib.sha256(whole.encode()).hexdigest(), "pk": pk},
        )
    op.drop_index("ix_source_turns_request", table_name="source_turns")
    op.drop_index("ix_source_turns_source", table_name="source_turns")
    op.drop_index("ix_source_turns_tenant", table_name="source_turns")
    op.drop_table("source_turns")
    with op.batch_alter_table("sources") as batch:
        for name in reversed(_SIZES):
            batch.drop_column(name)
