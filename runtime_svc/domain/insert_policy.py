"""The insert policy: what status a new memory gets, or why it is refused.

- permissive: every insert is stored active; a marker, when given, must still be valid.
- require_save_intent: an insert without a valid marker is refused; nothing is stored.
- review_pending: an insert without a marker is stored pending review.

Whatever the policy, a claimed marker the caller's credential is not trusted for is held:
the memory is stored pending review (so nothing the user wanted is lost, and nothing
unconfirmed is retrievable) and the result says so. A claim is not refused, because the
agent cannot tell a wrong claim from a missing trust setting; the user can, in review.

Whatever the policy and the claim, a memory whose text reads as instructions to the model
(`instruction_like`) is stored pending review with that reason: it is not served until a
user approves it, and is still rendered escaped after (`docs/security.md`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from enum import StrEnum

from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError, FieldViolation, Reason, invalid_field
from agentmem.contract.invisible import has_invisible
from runtime_svc.domain import instruction_like
from runtime_svc.domain.sources import Body, Message, SaveIntent, Status

SAVE_INTENTS = save_intents.ALL
MAX_INTENT_SOURCE = 64
MAX_INTENT_EVIDENCE = 200


class InsertPolicy(StrEnum):
    PERMISSIVE = "permissive"
    REQUIRE_SAVE_INTENT = "require_save_intent"
    REVIEW_PENDING = "review_pending"


@dataclass(frozen=True)
class InsertDecision:
    status: Status
    # The claimed marker is not one the caller is trusted for: pending whatever the policy.
    held: bool = False
    # The text reads as instructions to the model: pending whatever the policy and the claim.
    hold_reason: str = ""


_NAMED_START = 200  # characters of a message checked after its speaker's name


def steering(body: Body) -> bool:
    """Whether the memory's text reads as instructions to the model (`instruction_like`):
    its content, or any message's text, its speaker's name, or both as the block shows
    them (`name: text`: a name "System" before "you must …" reads as a system line; the
    text's start, where a pattern begun in the name would end); and each two adjacent
    messages as the block shows them on adjacent lines (an attack split in two)."""
    texts = [body.content]
    for m in body.messages:
        texts.append(m.content)
        if m.name:
            texts += (m.name, f"{m.name}: {m.content[:_NAMED_START]}")
    texts += [_adjacent(a, b) for a, b in zip(body.messages, body.messages[1:], strict=False)]
    return instruction_like.instruction_like(*texts)


def steers_across(before: Message, after: Message) -> bool:
    """Whether two adjacent messages read as instructions together, as the block shows them
    (an append's first message after the conversation's last: an attack split in two)."""
    return instruction_like.instruction_like(_adjacent(before, after))


def _adjacent(first: Message, second: Message) -> str:
    """The end of one message and the start of the next, on adjacent lines."""
    return f"{first.content[-_NAMED_START:]}\n{second.content[:_NAMED_START]}"


def hold_steering(decision: InsertDecision, steers: bool) -> InsertDecision:
    """`decision`, or pending review with the reason `instruction_like` when `steers`."""
    if not steers:
        return decision
    return replace(decision, status=Status.PENDING_REVIEW, hold_reason=instruction_like.HOLD_REASON)


def check_intent(intent: SaveIntent, prefix: str = "metadata.") -> SaveIntent:
    """A given marker must be one of the accepted values; its companions are short.
    `prefix`: where the request holds these fields (an insert's `metadata.`; a fact
    search has them at the top)."""
    if intent.intent and intent.intent not in SAVE_INTENTS:
        raise AgentmemError(
            Reason.SAVE_INTENT_INVALID,
            violations=(FieldViolation(f"{prefix}save_intent", "unknown value"),),
        )
    if len(intent.source) > MAX_INTENT_SOURCE or any(c < " " for c in intent.source):
        raise invalid_field(
            f"{prefix}save_intent_source", f"at most {MAX_INTENT_SOURCE} printable characters"
        )
    if has_invisible(intent.source):  # a name that could read differently from what it is
        raise invalid_field(
            f"{prefix}save_intent_source",
            "must not hold invisible characters (bidi controls, zero-width, tag characters)",
        )
    if len(intent.evidence) > MAX_INTENT_EVIDENCE or "\x00" in intent.evidence:
        raise invalid_field(
            f"{prefix}save_intent_evidence", f"at most {MAX_INTENT_EVIDENCE} characters"
        )
    return intent


def decide(policy: InsertPolicy, intent: SaveIntent, *, trusted: Collection[str]) -> InsertDecision:
    """The status an insert gets under `policy` for a caller trusted to claim `trusted`,
    or SAVE_INTENT_REQUIRED."""
    check_intent(intent)
    if intent.intent:
        if intent.intent not in trusted:
            return InsertDecision(Status.PENDING_REVIEW, held=True)
        return InsertDecision(Status.ACTIVE)
    if policy is InsertPolicy.REQUIRE_SAVE_INTENT:
        raise AgentmemError(
            Reason.SAVE_INTENT_REQUIRED,
            violations=(FieldViolation("metadata.save_intent", "required by the insert policy"),),
        )
    if policy is InsertPolicy.REVIEW_PENDING:
        return InsertDecision(Status.PENDING_REVIEW)
    return InsertDecision(Status.ACTIVE)


def held_reason(claimed: str) -> str:
    """Why a claim was held, in words: names the claim, never the memory."""
    return f"the credential is not trusted to claim save intent {claimed}; held for a user's review"
