"""The insert policy: what status a new memory gets, or why it is refused.

- permissive: every insert is stored active; a marker, when given, must still be valid.
- require_save_intent: an insert without a valid marker is refused; nothing is stored.
- review_pending: an insert without a marker is stored pending review.
"""

from __future__ import annotations

from enum import StrEnum

from agentmem.core.errors import AgentmemError, FieldViolation, Reason, invalid_field
from runtime_svc.domain.sources import SaveIntent, Status

SAVE_INTENTS = frozenset({"explicit_user_request", "user_confirmed", "client_auto_save"})
MAX_INTENT_SOURCE = 64
MAX_INTENT_EVIDENCE = 200


class InsertPolicy(StrEnum):
    PERMISSIVE = "permissive"
    REQUIRE_SAVE_INTENT = "require_save_intent"
    REVIEW_PENDING = "review_pending"


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
    if len(intent.evidence) > MAX_INTENT_EVIDENCE or "\x00" in intent.evidence:
        raise invalid_field(
            f"{prefix}save_intent_evidence", f"at most {MAX_INTENT_EVIDENCE} characters"
        )
    return intent


def decide(policy: InsertPolicy, intent: SaveIntent) -> Status:
    """The status an insert gets under `policy`, or SAVE_INTENT_REQUIRED."""
    check_intent(intent)
    if intent.intent:
        return Status.ACTIVE
    if policy is InsertPolicy.REQUIRE_SAVE_INTENT:
        raise AgentmemError(
            Reason.SAVE_INTENT_REQUIRED,
            violations=(FieldViolation("metadata.save_intent", "required by the insert policy"),),
        )
    if policy is InsertPolicy.REVIEW_PENDING:
        return Status.PENDING_REVIEW
    return Status.ACTIVE
