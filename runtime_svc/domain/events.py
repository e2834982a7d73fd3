"""Domain events: what the event log records. Ids and states only, never memory text."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import ClassVar


@dataclass(frozen=True)
class ThreadMemoryModeUpdated:
    kind: ClassVar[str] = "thread_memory_mode_updated"
    thread_id: str
    previous_mode: str
    mode: str
    revision: int
    effective_at_us: int


@dataclass(frozen=True)
class SourceClassificationUpdated:
    kind: ClassVar[str] = "source_classification_updated"
    source_id: str
    previous_classification: str
    classification: str
    revision: int
    effective_at_us: int


@dataclass(frozen=True)
class MemoryInserted:
    kind: ClassVar[str] = "memory_inserted"
    source_id: str
    revision: int
    source_kind: str
    status: str


@dataclass(frozen=True)
class MessagesAppended:
    kind: ClassVar[str] = "messages_appended"
    source_id: str
    revision: int
    appended: int
    message_count: int
    status: str


@dataclass(frozen=True)
class TurnsErased:
    """The turns one principal appended to a conversation were erased; it stays."""

    kind: ClassVar[str] = "turns_erased"
    source_id: str
    revision: int
    appended_by: str
    turns_erased: int
    messages_erased: int
    message_count: int


@dataclass(frozen=True)
class MemoryReviewed:
    kind: ClassVar[str] = "memory_reviewed"
    source_id: str
    revision: int
    status: str
    decision: str
    reviewer_id: str


@dataclass(frozen=True)
class InsertPolicyUpdated:
    kind: ClassVar[str] = "insert_policy_updated"
    previous_insert_policy: str
    insert_policy: str
    revision: int


@dataclass(frozen=True)
class ForeignSourceAdmitted:
    kind: ClassVar[str] = "foreign_source_admitted"
    source_id: str
    revision: int


@dataclass(frozen=True)
class ForeignSourceDenied:
    kind: ClassVar[str] = "foreign_source_denied"
    source_id: str
    reason: str


@dataclass(frozen=True)
class SourceRevoked:
    kind: ClassVar[str] = "source_revoked"
    source_id: str
    revision: int
    state: str


@dataclass(frozen=True)
class SourceErased:
    kind: ClassVar[str] = "source_erased"
    source_id: str


@dataclass(frozen=True)
class SourceErasureFinished:
    """The runtime finished removing an erased source's bytes from the database's files
    (`physical_erasure`: complete, or residue_possible where only an operator can go on)."""

    kind: ClassVar[str] = "source_erasure_finished"
    source_id: str
    physical_erasure: str
    scrubbed_at_us: int


@dataclass(frozen=True)
class OwnerKeyRegistered:
    kind: ClassVar[str] = "owner_key_registered"
    owner_id: str
    key_id: str


@dataclass(frozen=True)
class OwnerKeyRevoked:
    kind: ClassVar[str] = "owner_key_revoked"
    owner_id: str
    key_id: str
    sources_affected: int


@dataclass(frozen=True)
class AssentRevoked:
    kind: ClassVar[str] = "assent_revoked"
    source_id: str
    assent_id: str
    revision: int


@dataclass(frozen=True)
class FactRetracted:
    kind: ClassVar[str] = "fact_retracted"
    fact_id: str
    source_id: str


DomainEvent = (
    ThreadMemoryModeUpdated
    | SourceClassificationUpdated
    | MemoryInserted
    | MessagesAppended
    | TurnsErased
    | MemoryReviewed
    | InsertPolicyUpdated
    | ForeignSourceAdmitted
    | ForeignSourceDenied
    | SourceRevoked
    | SourceErased
    | SourceErasureFinished
    | OwnerKeyRegistered
    | OwnerKeyRevoked
    | AssentRevoked
    | FactRetracted
)
KINDS: dict[str, type[DomainEvent]] = {
    cls.kind: cls
    for cls in (
        ThreadMemoryModeUpdated,
        SourceClassificationUpdated,
        MemoryInserted,
        MessagesAppended,
        TurnsErased,
        MemoryReviewed,
        InsertPolicyUpdated,
        ForeignSourceAdmitted,
        ForeignSourceDenied,
        SourceRevoked,
        SourceErased,
        SourceErasureFinished,
        OwnerKeyRegistered,
        OwnerKeyRevoked,
        AssentRevoked,
        FactRetracted,
    )
}


@dataclass(frozen=True)
class LoggedEvent:
    """An event as stored: its place in the tenant's log and its payload."""

    sequence: int
    event_id: str
    at_us: int
    event: DomainEvent


def to_payload(event: DomainEvent) -> str:
    return json.dumps(asdict(event), sort_keys=True, separators=(",", ":"))


def from_payload(kind: str, payload: str) -> DomainEvent:
    return KINDS[kind](**json.loads(payload))
