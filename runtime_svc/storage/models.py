"""Typed table models. Every table is keyed by tenant first: queries scope by tenant in SQL.

Times are integer microseconds since the Unix epoch (exact, portable, hashable).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, MetaData, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class TenantState(Base):
    """Per-tenant counters, updated under the row lock of the writing transaction."""

    __tablename__ = "tenant_state"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    event_sequence: Mapped[int] = mapped_column(BigInteger, default=0)
    # Events up to and including this sequence have been compacted away.
    events_compacted_through: Mapped[int] = mapped_column(BigInteger, default=0)
    receipt_sequence: Mapped[int] = mapped_column(BigInteger, default=0)
    receipt_head_hash: Mapped[str] = mapped_column(String(64), default="")


class ThreadModeRow(Base):
    __tablename__ = "thread_modes"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    mode: Mapped[str] = mapped_column(String(16))
    revision: Mapped[int] = mapped_column(BigInteger)
    effective_at_us: Mapped[int] = mapped_column(BigInteger)


class EventRow(Base):
    """Append-only event log. `payload` is JSON of ids and states, never memory text."""

    __tablename__ = "events"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    sequence: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    event_id: Mapped[str] = mapped_column(String(40), unique=True)
    kind: Mapped[str] = mapped_column(String(64))
    at_us: Mapped[int] = mapped_column(BigInteger)
    payload: Mapped[str] = mapped_column(Text)

    __table_args__ = (Index("ix_events_at", "at_us"),)


class AuditReceiptRow(Base):
    """Hash-chained audit receipts, one chain per tenant."""

    __tablename__ = "audit_receipts"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    sequence: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    receipt_id: Mapped[str] = mapped_column(String(40), unique=True)
    at_us: Mapped[int] = mapped_column(BigInteger)
    action: Mapped[str] = mapped_column(String(64))
    target_kind: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str] = mapped_column(String(128))
    target_revision: Mapped[int] = mapped_column(BigInteger)
    principal_id: Mapped[str] = mapped_column(String(128))
    request_id: Mapped[str] = mapped_column(String(128))
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))

    __table_args__ = (Index("ix_audit_receipts_target", "tenant_id", "target_id", "sequence"),)
