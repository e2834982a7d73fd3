"""Sources: stored units of memory, their revisions, classification and generated form."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from agentmem.contract import validation
from agentmem.contract.errors import invalid_field
from runtime_svc.domain import eligibility, stored_json
from runtime_svc.domain.lifecycle import Phase

MAX_MESSAGES = 262_143  # a passage's first message fits in its index key (`entry_keys`)
MAX_NAME_CHARS = 128
ROLES = frozenset({"user", "assistant", "system", "tool"})
MAX_LABELS = 32
MAX_LABEL_CHARS = 128


class SourceKind(StrEnum):
    MEMORY = "memory"
    CONVERSATION = "conversation"
    FOREIGN = "foreign"
    LEGACY = "legacy"


class Classification(StrEnum):
    ACTIVE = "active"
    COLD = "cold"


class AssentState(StrEnum):
    NONE = ""  # not a foreign source
    VALID = "valid"
    INVALID = "invalid"


class Status(StrEnum):
    ACTIVE = "active"
    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    ERASED = "erased"  # a tombstone: set by erasure only, never changed again


def speaker(role: str, name: str) -> str:
    """Who said a message, as a passage shows it: the speaker's name, else the role."""
    return name or role


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    name: str = ""  # the speaker, optional
    sent_at_us: int = 0  # 0: not given

    @property
    def speaker(self) -> str:
        return speaker(self.role, self.name)

    def row(self) -> list[str | int]:
        """Stored form: [role, content], with [name, sent_at_us] appended when either is
        given (rows stored before speakers and dates existed keep their bytes and hash)."""
        if self.name or self.sent_at_us:
            return [self.role, self.content, self.name, self.sent_at_us]
        return [self.role, self.content]


@dataclass(frozen=True)
class Body:
    """What the caller stored: one text, or a conversation."""

    content: str = ""
    messages: tuple[Message, ...] = ()
    # The indexed text when it is not the content itself (a foreign source's title and
    # descriptor, not its pointer JSON).
    generated: str = ""

    def raw(self) -> str:
        """The stored bytes, exactly as given (messages as JSON)."""
        if self.messages:
            return json.dumps([m.row() for m in self.messages], ensure_ascii=False)
        return self.content

    def generated_form(self) -> str:
        """The text that is indexed and injected: the content, or `role: text` lines."""
        if self.generated:
            return self.generated
        if self.messages:
            return "\n".join(f"{m.role}: {m.content}" for m in self.messages)
        return self.content

    def sha256(self) -> str:
        return hashlib.sha256(self.raw().encode()).hexdigest()

    @staticmethod
    def stored_lines(raw: str, start: int, end: int) -> tuple[list[tuple[str, str]], int]:
        """(`speaker`, content) of messages `start`..`end` (inclusive) of a conversation's
        stored form, and the first `sent_at_us` any of its messages gives (0: none). No
        message is built (a search hit's passage is rendered from this: building them cost
        as much as decoding the JSON)."""
        lines, sent = Body.decoded(raw)
        return list(lines[start : end + 1]), sent

    @staticmethod
    def decoded(raw: str) -> tuple[tuple[tuple[str, str], ...], int]:
        """A conversation's stored form as (speaker, content) lines, and the first
        `sent_at_us` any of its messages gives (0: none)."""
        rows = stored_json.loads(raw) if raw else []
        sent = next((r[3] for r in rows if len(r) > 3 and r[3]), 0)
        return tuple((speaker(r[0], r[2] if len(r) > 2 else ""), r[1]) for r in rows), sent

    @staticmethod
    def from_raw(kind: SourceKind, raw: str) -> Body:
        if kind is SourceKind.CONVERSATION and raw:  # an erased one keeps no bytes
            return Body(messages=tuple(Message(*row) for row in stored_json.loads(raw)))
        return Body(content=raw)


@dataclass(frozen=True)
class BodyLimits:
    """What one insert may hold, and a conversation that appends made longer
    (`limits.max_*` in the configuration): a conversation's messages, the characters of
    one text or message, and of a conversation in all."""

    messages: int = MAX_MESSAGES
    message_chars: int = 1_000_000
    conversation_chars: int = 1_000_000


DEFAULT_LIMITS = BodyLimits()


def check_body(
    content: str, messages: Sequence[Message], limits: BodyLimits = DEFAULT_LIMITS
) -> Body:
    if bool(content) == bool(messages):
        raise invalid_field("content", "give exactly one of content and messages")
    if content:
        _check_text("content", content, limits.message_chars)
        return Body(content=content)
    check_messages(messages, limits)
    return Body(messages=tuple(messages))


def check_messages(messages: Sequence[Message], limits: BodyLimits) -> None:
    """A conversation's messages within the limits."""
    if len(messages) > limits.messages:
        raise invalid_field("messages", f"at most {limits.messages} messages")
    total = 0
    for i, m in enumerate(messages):
        if m.role not in ROLES:
            raise invalid_field(f"messages[{i}].role", f"must be one of {sorted(ROLES)}")
        _check_text(f"messages[{i}].content", m.content, limits.message_chars)
        if len(m.name) > MAX_NAME_CHARS or "\x00" in m.name:
            raise invalid_field(f"messages[{i}].name", f"at most {MAX_NAME_CHARS} characters")
        total += len(m.content)
    if total > limits.conversation_chars:
        raise invalid_field("messages", f"at most {limits.conversation_chars} characters in all")


CLOCK_SKEW_US = 300_000_000  # clocks disagree: up to five minutes ahead is "now"


def check_said_times(now_us: int, messages: Sequence[Message], observed_at_us: int = 0) -> None:
    """When the content was said or true (`observed_at`, each message's `sent_at`; 0: not
    given): not in the future, up to `CLOCK_SKEW_US` ahead of the clock. A statement from
    the future would stay current after every later correction."""
    _not_ahead("observed_at", observed_at_us, now_us)
    for i, m in enumerate(messages):
        _not_ahead(f"messages[{i}].sent_at", m.sent_at_us, now_us)


def _not_ahead(name: str, at_us: int, now_us: int) -> None:
    if at_us > now_us + CLOCK_SKEW_US:
        raise invalid_field(
            name, "must not be in the future (more than 5 minutes ahead of the server's clock)"
        )


def _check_text(name: str, text: str, most: int) -> None:
    if not text.strip():
        raise invalid_field(name, "must not be blank")
    if len(text) > most:
        raise invalid_field(name, f"must be at most {most} characters")
    if "\x00" in text:
        raise invalid_field(name, "must not contain NUL bytes")


def check_labels(labels: dict[str, str]) -> dict[str, str]:
    if len(labels) > MAX_LABELS:
        raise invalid_field("metadata.labels", f"at most {MAX_LABELS} labels")
    for key, value in labels.items():
        validation.identifier("metadata.labels", key)
        if len(value) > MAX_LABEL_CHARS or "\x00" in value:
            raise invalid_field("metadata.labels", f"values: at most {MAX_LABEL_CHARS} characters")
    return dict(labels)


@dataclass(frozen=True)
class Provenance:
    principal_id: str
    principal_kind: str
    surface: str
    request_id: str


@dataclass(frozen=True)
class SaveIntent:
    intent: str = ""
    source: str = ""
    evidence: str = ""


@dataclass(frozen=True)
class Review:
    reviewer_id: str
    reviewed_at_us: int
    note: str = ""


@dataclass(frozen=True)
class Source:
    source_id: str
    revision: int
    kind: SourceKind
    classification: Classification
    status: Status
    thread_id: str
    body: Body
    provenance: Provenance
    save_intent: SaveIntent
    labels: dict[str, str] = field(default_factory=dict)
    # The inserted claim was not trusted for its caller: stored pending review, and only a
    # user's approval makes it retrievable (an agent's, even its deployment allowing
    # self-approval, does not).
    save_intent_held: bool = False
    # What the text says held it for review (`instruction_like`), "" when nothing did.
    hold_reason: str = ""
    created_at_us: int = 0
    updated_at_us: int = 0
    revoked_at_us: int = 0
    assent_state: str = ""
    assent_expires_at_us: int = 0
    review: Review | None = None
    canonical_owner: str = ""
    assent_id: str = ""
    assent_key_id: str = ""
    erased_at_us: int = 0
    # When the content was said or true (the caller's `observed_at`; default: received).
    observed_at_us: int = 0

    @property
    def phase(self) -> Phase:
        if self.erased_at_us:
            return Phase.ERASED
        if self.revoked_at_us:
            return Phase.REVOKED
        if self.status is Status.PENDING_REVIEW:
            return Phase.PENDING_REVIEW
        if self.status is Status.REJECTED:
            return Phase.REJECTED
        return Phase.ACTIVE

    def matchable_text(self) -> str:
        """The words a query can match: the generated form (a foreign pointer's title and
        descriptor, never its URI)."""
        if self.kind is SourceKind.FOREIGN and self.body.content:
            pointer = json.loads(self.body.content)
            return f"{pointer.get('title', '')}\n{pointer.get('descriptor', '')}"
        return self.body.generated_form()

    def indexable(self) -> bool:
        """Eligible unless a time-dependent rule holds: what its index entry's scope says."""
        return eligibility.eligible_regardless_of_time(self.eligibility_row())

    def state(self, now_us: int) -> str:
        """Its effective retrieval state now."""
        return eligibility.effective_state(self.eligibility_row(), now_us).value

    def eligibility_row(self) -> dict[str, object]:
        return {
            "classification": self.classification.value,
            "status": self.status.value,
            "revoked_at_us": self.revoked_at_us,
            "assent_state": self.assent_state,
            "assent_expires_at_us": self.assent_expires_at_us,
        }
