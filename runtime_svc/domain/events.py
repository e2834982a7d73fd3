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


DomainEvent = ThreadMemoryModeUpdated
KINDS: dict[str, type[DomainEvent]] = {cls.kind: cls for cls in (ThreadMemoryModeUpdated,)}


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
