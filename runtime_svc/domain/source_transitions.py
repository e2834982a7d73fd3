"""A source's changes of state: each one checked against the lifecycle, each one the source's
next revision (classify, revoke, erase, assent invalidated or granted again, messages
appended)."""

from __future__ import annotations

from dataclasses import replace

from agentmem.contract import validation
from agentmem.contract.errors import invalid_field, revision_mismatch
from runtime_svc.domain import lifecycle, tails
from runtime_svc.domain.foreign import Assent
from runtime_svc.domain.lifecycle import Phase, Transition
from runtime_svc.domain.sources import (
    AssentState,
    Body,
    BodyLimits,
    Classification,
    Message,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)


def _next(source: Source, now_us: int) -> Source:
    """The source, changed, as its next revision."""
    return replace(source, revision=source.revision + 1, updated_at_us=now_us)


def check_revision(source: Source, expected_revision: int) -> None:
    validation.non_negative("expected_revision", expected_revision)
    if expected_revision != source.revision:
        raise revision_mismatch(f"source/{source.source_id}", source.revision)


def classify(
    source: Source, *, expected_revision: int, classification: Classification, now_us: int
) -> Source:
    lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(Transition.CLASSIFY, source.phase)
    return _next(replace(source, classification=classification), now_us)


def revoke(source: Source, *, now_us: int, assent: bool = False) -> Source:
    """Revoked at once and for good; revoking again keeps the first revocation."""
    lifecycle.check(Transition.REVOKE_ASSENT if assent else Transition.REVOKE, source.phase)
    if source.revoked_at_us:
        return source
    return _next(replace(source, revoked_at_us=now_us), now_us)


def erase(source: Source, *, expected_revision: int, now_us: int) -> Source:
    """A tombstone: ids and the revision history stay, the bytes and every hash of them go."""
    if source.phase is Phase.ERASED:  # erasing a revoked source is allowed
        lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(Transition.ERASE, source.phase)
    erased = replace(
        source,
        status=Status.ERASED,
        revoked_at_us=source.revoked_at_us or now_us,
        erased_at_us=now_us,
        body=Body(),
        labels={},
        save_intent=SaveIntent(source.save_intent.intent, source.save_intent.source, ""),
        review=replace(source.review, note="") if source.review else None,
    )
    return _next(erased, now_us)


def invalidate_assent(source: Source, *, now_us: int) -> Source:
    lifecycle.check(Transition.INVALIDATE_ASSENT, source.phase)
    return _next(replace(source, assent_state=AssentState.INVALID.value), now_us)


def with_assent(source: Source, assent: Assent) -> Source:
    """The source under a valid signed assent."""
    return replace(
        source,
        assent_state=AssentState.VALID.value,
        assent_id=assent.assent_id,
        assent_key_id=assent.key_id,
        assent_expires_at_us=assent.expires_at_us,
    )


def readmit(source: Source, *, assent: Assent, now_us: int) -> Source:
    lifecycle.check(Transition.READMIT, source.phase)
    return _next(with_assent(source, assent), now_us)


def append(
    source: Source,
    *,
    expected_revision: int,
    messages: tuple[Message, ...],
    limits: BodyLimits,
    now_us: int,
) -> Source:
    """A conversation with `messages` (checked already) appended, as its next revision:
    its classification, labels and save intent stay; the limits apply to what it becomes."""
    lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(Transition.APPEND, source.phase)
    if source.kind is not SourceKind.CONVERSATION:
        raise invalid_field("source_id", "only a conversation takes appended messages")
    # A stored session is read as its tail (`tails.Tail`): what it grows into is one too.
    grown = source.body.messages + messages
    if len(grown) > limits.messages:
        raise invalid_field("messages", f"the conversation would hold over {limits.messages}")
    if tails.chars(grown) > limits.conversation_chars:
        raise invalid_field(
            "messages", f"the conversation would hold over {limits.conversation_chars} characters"
        )
    return _next(replace(source, body=Body(messages=grown)), now_us)


def erase_turns(
    source: Source, *, expected_revision: int, messages: tuple[Message, ...], now_us: int
) -> Source:
    """A conversation without the turns a partial erasure took (`turns.erase_appended`),
    as its next revision: its status, classification, labels and save intent stay (a
    conversation held for review stays held: a person decides on what is left)."""
    lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(Transition.ERASE_TURNS, source.phase)
    if source.kind is not SourceKind.CONVERSATION:
        raise invalid_field("appended_by", "only a conversation has appended turns")
    return _next(replace(source, body=Body(messages=messages)), now_us)
