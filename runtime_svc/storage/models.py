"""Typed table models: every table of the runtime on one declarative `Base`. Every table is
keyed by tenant first: queries scope by tenant in SQL.

Times are integer microseconds since the Unix epoch (exact, portable, hashable).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, REAL
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names for Alembic.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


# An integer primary key that is SQLite's rowid (so the search index can share it).
RowId = BigInteger().with_variant(Integer, "sqlite")


class TenantState(Base):
    """Per-tenant counters, updated under the row lock of the writing transaction."""

    __tablename__ = "tenant_state"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    event_sequence: Mapped[int] = mapped_column(BigInteger, default=0)
    # Events up to and including this sequence have been compacted away.
    events_compacted_through: Mapped[int] = mapped_column(BigInteger, default=0)
    receipt_sequence: Mapped[int] = mapped_column(BigInteger, default=0)
    receipt_head_hash: Mapped[str] = mapped_column(String(64), default="")
    # How many of the tenant's sources have an entry in the search index.
    indexed_docs: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # The last stamp given to a change of the tenant's search index entries.
    index_stamp: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # The index stamp of the last change that removed a word from the tenant's index.
    words_removed_at: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


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
    # An insert's save-intent claim, and whether it was held (hashed only when set).
    save_intent: Mapped[str] = mapped_column(String(32), server_default="")
    save_intent_held: Mapped[bool] = mapped_column(Boolean, server_default=false())
    # A partial erasure's counts: the turns and messages it erased (hashed only when set).
    turns_erased: Mapped[int] = mapped_column(BigInteger, server_default="0")
    messages_erased: Mapped[int] = mapped_column(BigInteger, server_default="0")

    __table_args__ = (Index("ix_audit_receipts_target", "tenant_id", "target_id", "sequence"),)


class SourceRow(Base):
    """A stored unit of memory. `pk` is internal (never leaves the runtime); `source_id` is
    the opaque public id. `raw` holds the bytes as given; `generated_form` the indexed text."""

    __tablename__ = "sources"
    pk: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    source_id: Mapped[str] = mapped_column(String(40))
    revision: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))
    classification: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16))
    thread_id: Mapped[str] = mapped_column(String(128))
    raw: Mapped[str] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    generated_form: Mapped[str] = mapped_column(Text)
    # Provenance of the derived forms: the source revision each was made from (0: none).
    generated_revision: Mapped[int] = mapped_column(BigInteger)
    indexed_revision: Mapped[int] = mapped_column(BigInteger)
    principal_id: Mapped[str] = mapped_column(String(128))
    principal_kind: Mapped[str] = mapped_column(String(16))
    surface: Mapped[str] = mapped_column(String(16))
    request_id: Mapped[str] = mapped_column(String(128))
    save_intent: Mapped[str] = mapped_column(String(32))
    save_intent_source: Mapped[str] = mapped_column(String(64))
    save_intent_evidence: Mapped[str] = mapped_column(String(200))
    # The claimed save intent was not trusted for the inserting credential (held for review).
    save_intent_held: Mapped[bool] = mapped_column(Boolean, server_default=false())
    # Why its text held it for review ("instruction_like"; "" when it did not).
    hold_reason: Mapped[str] = mapped_column(String(32), server_default="")
    labels: Mapped[str] = mapped_column(Text)  # JSON object
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    updated_at_us: Mapped[int] = mapped_column(BigInteger)
    # What the eligibility predicate needs beyond classification and status.
    revoked_at_us: Mapped[int] = mapped_column(BigInteger)
    assent_state: Mapped[str] = mapped_column(String(16))
    assent_expires_at_us: Mapped[int] = mapped_column(BigInteger)
    # Review of a pending insert.
    reviewed_by: Mapped[str] = mapped_column(String(128), server_default="")
    reviewed_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    review_note: Mapped[str] = mapped_column(String(200), server_default="")
    # Foreign sources: the owner and the assent in force.
    canonical_owner: Mapped[str] = mapped_column(String(128), server_default="")
    assent_id: Mapped[str] = mapped_column(String(128), server_default="")
    assent_key_id: Mapped[str] = mapped_column(String(128), server_default="")
    erased_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # When the content was said or true (default: when it was received).
    observed_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # A conversation's size with its appended messages (`raw` holds those it was inserted
    # with, `source_turns` those appended since, `turn_rows` of them), its characters and
    # the first `sent_at` any message gives: an append reads and writes these, not `raw`.
    message_count: Mapped[int] = mapped_column(BigInteger, server_default="0")
    content_chars: Mapped[int] = mapped_column(BigInteger, server_default="0")
    first_sent_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    turn_rows: Mapped[int] = mapped_column(BigInteger, server_default="0")

    __table_args__ = (
        UniqueConstraint("tenant_id", "source_id"),
        Index(
            "ix_sources_request",
            "tenant_id",
            "principal_id",
            "request_id",
            unique=True,
            sqlite_where=text("request_id != ''"),
            postgresql_where=text("request_id != ''"),
        ),
        # Listings, newest first (ListSources, ListMemories).
        Index("ix_sources_created", "tenant_id", "created_at_us", "source_id"),
    )


class SourceTurnRow(Base):
    """The messages one append added to a conversation, in its stored form (a JSON array,
    as `raw` holds the inserted ones): the whole conversation is `raw` followed by its turn
    rows by `first_message`. `request_id`: the append's, for a retry (unique per tenant and
    appender); `revision`: the source revision it made; `principal_id`, `principal_kind`:
    who appended it, and `save_intent` the intent its append claimed. Erasure deletes them
    with the source's bytes."""

    __tablename__ = "source_turns"
    pk: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    source_pk: Mapped[int] = mapped_column(BigInteger)
    first_message: Mapped[int] = mapped_column(BigInteger)
    rows: Mapped[str] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    revision: Mapped[int] = mapped_column(BigInteger)
    request_id: Mapped[str] = mapped_column(String(128), server_default="")
    principal_id: Mapped[str] = mapped_column(String(128), server_default="")
    principal_kind: Mapped[str] = mapped_column(String(16), server_default="")
    save_intent: Mapped[str] = mapped_column(String(32), server_default="")
    # The trust its append was given: the claim held (not trusted for the appender), the
    # conversation held for review by this append, and why ("instruction_like").
    save_intent_held: Mapped[bool] = mapped_column(Boolean, server_default=false())
    held: Mapped[bool] = mapped_column(Boolean, server_default=false())
    hold_reason: Mapped[str] = mapped_column(String(32), server_default="")

    __table_args__ = (
        Index("ix_source_turns_source", "source_pk", "first_message", unique=True),
        Index("ix_source_turns_tenant", "tenant_id"),  # a tenant's stored bytes (quotas)
        Index(
            "ix_source_turns_request",
            "tenant_id",
            "principal_id",
            "request_id",
            unique=True,
            sqlite_where=text("request_id != ''"),
            postgresql_where=text("request_id != ''"),
        ),
    )


class PromptRecordRow(Base):
    """A prompt block that was handed out: a derived record of every source it cites."""

    __tablename__ = "prompt_records"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    prompt_record_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(128))
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    token_budget: Mapped[int] = mapped_column(BigInteger)
    tokens_used: Mapped[int] = mapped_column(BigInteger)
    # SHA-256 of the query: enough to recognise a repeat, never the text.
    query_sha256: Mapped[str] = mapped_column(String(64))


class DerivedProvenanceRow(Base):
    """Provenance of derived records that draw on several sources (prompt records, …):
    one row per (derived record, source revision). Revocation readback reads this."""

    __tablename__ = "derived_provenance"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    derived_kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    derived_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_revision: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_derived_provenance_source", "tenant_id", "source_id"),)


class TenantPolicyRow(Base):
    """A tenant's override of the configured insert policy."""

    __tablename__ = "tenant_policies"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    insert_policy: Mapped[str] = mapped_column(String(32))
    revision: Mapped[int] = mapped_column(BigInteger)
    updated_at_us: Mapped[int] = mapped_column(BigInteger)


class FactRow(Base):
    """A fact extracted from a source: a derived record with its provenance inline."""

    __tablename__ = "facts"
    pk: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    fact_id: Mapped[str] = mapped_column(String(40))
    source_id: Mapped[str] = mapped_column(String(40))
    source_revision: Mapped[int] = mapped_column(BigInteger)
    subject: Mapped[str] = mapped_column(String(128))
    predicate: Mapped[str] = mapped_column(String(64))
    object: Mapped[str] = mapped_column(String(256))
    statement: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)
    confidence_reason: Mapped[str] = mapped_column(String(128))
    save_intent: Mapped[str] = mapped_column(String(32))
    save_intent_source: Mapped[str] = mapped_column(String(64))
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    # The conversation's passage (message range) it was stated in; NULL: none, or a fact
    # stored before facts cited passages.
    passage_start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    passage_end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The sentence it was read from: character offsets in the text said (NULL: not known).
    sentence_start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    sentence_end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Time: when it was stated, and whether the statement says the value ended.
    valid_from_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    ends: Mapped[int] = mapped_column(Integer, server_default="0")
    # Its attribute (runtime_svc.domain.attributes): subject, predicate and this value key
    # ("" for a single-valued attribute).
    object_key: Mapped[str] = mapped_column(String(256), server_default="")
    # Set by RetractFact: the user said it is wrong.
    retracted_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    # Its place in its attribute's chain, derived from the live statements by the one
    # writer (runtime_svc.services.fact_chains): whether it opens an interval, when that
    # ended (0: current), which statement ended it, and whose value it replaced.
    opens: Mapped[int] = mapped_column(Integer, server_default="0")
    valid_to_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    superseded_by: Mapped[str] = mapped_column(String(40), server_default="")
    superseded_by_source: Mapped[str] = mapped_column(String(40), server_default="")
    supersedes: Mapped[str] = mapped_column(String(40), server_default="")

    __table_args__ = (
        UniqueConstraint("tenant_id", "fact_id"),
        Index("ix_facts_source", "tenant_id", "source_id"),
        Index("ix_facts_attribute", "tenant_id", "subject", "predicate", "object_key"),
        Index("ix_facts_superseded_by_source", "tenant_id", "superseded_by_source"),
    )


class OwnerKeyRow(Base):
    """A canonical owner's Ed25519 public key for verifying assents."""

    __tablename__ = "owner_keys"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    owner_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    key_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    public_key_pem: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))  # active | revoked
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    revoked_at_us: Mapped[int] = mapped_column(BigInteger)


class RevokedAssentRow(Base):
    """Assent ids (jti) revoked for good: an assent with one of them is never accepted."""

    __tablename__ = "revoked_assents"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    assent_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(64))
    revoked_at_us: Mapped[int] = mapped_column(BigInteger)


class PhysicalErasureRow(Base):
    """An erasure's physical part: pending until a WAL checkpoint (SQLite) or a VACUUM
    (PostgreSQL) that covers it finishes (`runtime_svc.services.erasure_finisher`)."""

    __tablename__ = "physical_erasures"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    erased_at_us: Mapped[int] = mapped_column(BigInteger)
    scrubbed_at_us: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    __table_args__ = (Index("ix_physical_erasures_pending", "scrubbed_at_us"),)


# The search index (postings and word counts) and vectors (the outbox of sources waiting to be
# embedded, and the vectors): derived records, written by `storage.postings`, the outbox and
# the background indexer (`runtime_svc.retrieval.indexer`), purged with their source
# (`storage.vectors`), ranked by `runtime_svc.retrieval`.


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
    # change that last wrote the entry or its eligibility (see retrieval.held.held_postings).
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
    """Sources waiting to be embedded, one place each, in the order they were first queued;
    the background indexer takes them in batches and deletes them once their vectors are
    stored (`storage.embedding_outbox`)."""

    __tablename__ = "vector_outbox"
    seq: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    source_pk: Mapped[int] = mapped_column(BigInteger)
    source_id: Mapped[str] = mapped_column(String(64))
    enqueued_at_us: Mapped[int] = mapped_column(BigInteger)
    # Queued again while waiting (an append): one up each time.
    version: Mapped[int] = mapped_column(Integer, server_default="0")
    # Failures: how many, the latest's time and exception type; held back until not_before.
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    not_before_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    failed_at_us: Mapped[int] = mapped_column(BigInteger, server_default="0")
    last_error: Mapped[str] = mapped_column(String(64), server_default="")
    __table_args__ = (
        Index("ix_vector_outbox_source", "tenant_id", "source_id"),
        Index("ux_vector_outbox_source_pk", "source_pk", unique=True),
        Index("ix_vector_outbox_tenant", "tenant_id", "seq"),
    )


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
