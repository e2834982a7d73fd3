"""The tables of the search index (postings and word counts) and of vectors (the outbox of
sources waiting to be embedded, and the vectors): derived records, written by
`storage.postings` and `storage.vectors`, ranked by `runtime_svc.search`."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Float,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, REAL
from sqlalchemy.orm import Mapped, mapped_column

from runtime_svc.storage.base import Base, RowId


class SearchPosting(Base):
    """The search index (runtime_svc.storage.postings): one row per content word of an
    indexed source, with that word's impact, and whether the source is eligible (ignoring
    time-dependent rules). Keyed by source for removal and exact scoring; the second index
    lists a tenant's eligible postings of a word best impact first."""

    __tablename__ = "search_postings"
    pk: Mapped[int] = mapped_column(BigInteger)  # sources.pk
    term: Mapped[str] = mapped_column(Text)
    tenant_id: Mapped[str] = mapped_column(String(128))
    eligible: Mapped[int] = mapped_column(Integer)
    impact: Mapped[float] = mapped_column(Float)
    # On the row marking an entry (the empty word): the tenant's index stamp taken by the
    # change that last wrote the entry or its eligibility (see search.held_postings).
    stamp: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    __table_args__ = (
        # Scoring looks a memory's impacts up by (pk, term): on PostgreSQL the key carries
        # the impact, so the lookup reads the index only (SQLite's table is its key).
        PrimaryKeyConstraint("pk", "term", postgresql_include=["impact"]),
        Index("ix_search_postings_impact", "tenant_id", "term", "eligible", "impact"),
        Index(
            "ix_search_postings_stamp",
            "tenant_id",
            "stamp",
            sqlite_where=text("term = ''"),
            postgresql_where=text("term = ''"),
        ),
        {"sqlite_with_rowid": False},
    )


class SearchTerm(Base):
    """Per tenant and word: in how many of the tenant's index entries it occurs, in how many
    of its eligible ones (the ranking statistics), and an upper bound of its impacts (never
    lowered). See runtime_svc.storage.term_counts."""

    __tablename__ = "search_terms"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    term: Mapped[str] = mapped_column(Text, primary_key=True)
    docs: Mapped[int] = mapped_column(BigInteger)
    eligible_docs: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    max_impact: Mapped[float] = mapped_column(Float)

    __table_args__ = ({"sqlite_with_rowid": False},)


# A vector: float32 little-endian bytes on SQLite (what sqlite-vec reads), real[] on
# PostgreSQL (cast to pgvector's `vector` in the ranked query, so the schema does not need
# the extension).
Embedding = LargeBinary().with_variant(ARRAY(REAL()), "postgresql")


class VectorOutboxRow(Base):
    """Sources waiting to be embedded, in the order they were committed; the background
    indexer takes them in batches and deletes them once their vector is stored."""

    __tablename__ = "vector_outbox"
    seq: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    source_pk: Mapped[int] = mapped_column(BigInteger)
    source_id: Mapped[str] = mapped_column(String(64))
    enqueued_at_us: Mapped[int] = mapped_column(BigInteger)
    __table_args__ = (Index("ix_vector_outbox_source", "tenant_id", "source_id"),)


class MemoryVectorRow(Base):
    """A derived record: one search index entry's text (a whole-text memory, or one passage
    of a conversation: `passage` holds the entry key's low bits, 0 for a whole text) embedded
    by one model. `signature` holds one bit per dimension for the coarse pass over large
    tenants (SQLite); `seq` grows with every vector stored."""

    __tablename__ = "memory_vectors"
    seq: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    source_pk: Mapped[int] = mapped_column(BigInteger)
    passage: Mapped[int] = mapped_column(Integer)
    model_id: Mapped[str] = mapped_column(String(200))
    tenant_id: Mapped[str] = mapped_column(String(128))
    source_id: Mapped[str] = mapped_column(String(64))
    source_revision: Mapped[int] = mapped_column(BigInteger)
    dimension: Mapped[int] = mapped_column(Integer)
    embedding: Mapped[bytes] = mapped_column(Embedding)
    signature: Mapped[bytes] = mapped_column(LargeBinary)
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    __table_args__ = (
        Index("ux_memory_vectors_entry", "source_pk", "passage", "model_id", unique=True),
        Index("ix_memory_vectors_scan", "tenant_id", "model_id", "seq"),
        Index("ix_memory_vectors_source", "tenant_id", "source_id"),
        {"sqlite_autoincrement": True},
    )
