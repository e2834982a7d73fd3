"""Review of pending inserts (review_pending).

Approval needs the memory.review scope (checked by the gateway); an agent may not approve
what it inserted itself unless the deployment allows it, and never a claim of its own that
was held (an untrusted save intent: allowing it would let the claim through after all); a
user's approval records the save intent as user_confirmed. Rejection keeps the memory out
of every read but the explicit rejected filter.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from agentmem.core.errors import AgentmemError, Reason, invalid_field
from runtime_svc.domain import lifecycle
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.source_changes import check_revision
from runtime_svc.domain.sources import Review, SaveIntent, Source, Status

MAX_NOTE = 200


class Decision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"

    @property
    def transition(self) -> Transition:
        return Transition.APPROVE if self is Decision.APPROVE else Transition.REJECT


def review(
    source: Source,
    *,
    expected_revision: int,
    decision: Decision,
    reviewer: Caller,
    note: str,
    allow_self_approval: bool,
    now_us: int,
) -> Source:
    if len(note) > MAX_NOTE or "\x00" in note:
        raise invalid_field("note", f"must be at most {MAX_NOTE} characters")
    lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(decision.transition, source.phase)
    own = reviewer.principal_id == source.provenance.principal_id
    if (
        decision is Decision.APPROVE
        and own
        and reviewer.principal_kind == "agent"
        and (source.save_intent_held or not allow_self_approval)
    ):
        raise AgentmemError(Reason.SELF_APPROVAL_DENIED)
    intent = source.save_intent
    if decision is Decision.APPROVE and reviewer.principal_kind == "user":
        intent = SaveIntent("user_confirmed", intent.source, "approved in review")
    return replace(
        source,
        revision=source.revision + 1,
        status=Status.ACTIVE if decision is Decision.APPROVE else Status.REJECTED,
        save_intent=intent,
        updated_at_us=now_us,
        review=Review(reviewer.principal_id, now_us, note),
    )
