"""Review of pending memories: who may approve or reject what, and what a decision changes.

Who may decide is one table, `RULES`: principal kind, why the memory waits (`Hold`) and
decision give a `Verdict`. The memory.review scope is checked before (by the gateway); the table
says which holders of it may decide:

- A **held** memory (a save intent its credential was not trusted to claim, or any other
  hold that is not the insert policy's own) is approved or rejected only by a person: a user
  principal. An agent or a service gets APPROVAL_REQUIRES_PERSON, whoever inserted it and
  whatever the deployment allows.
- An **ordinary pending** memory (pending by the insert policy alone): a user decides; an
  agent approves text other principals contributed, and text it contributed itself (it
  inserted the memory, or appended a turn to the conversation) only where
  `memory.allow_self_approval` is on (SELF_APPROVAL_DENIED otherwise), and rejects any; a
  service decides only where `memory.allow_service_review` is on (a service key usually
  acts for many clients, so its decision is nobody's in particular).

A new hold reason is one `Hold` member, listed in `PERSON_ONLY` (a person lifts it) and
recognised by `hold_of`. A user's approval records the save intent as user_confirmed.
Rejection keeps the memory out of every read but the explicit rejected filter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from agentmem.contract.errors import AgentmemError, Reason, invalid_field
from runtime_svc.domain import lifecycle
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.lifecycle import Transition
from runtime_svc.domain.source_transitions import check_revision
from runtime_svc.domain.sources import Review, SaveIntent, Source, Status

MAX_NOTE = 200


class Decision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"

    @property
    def transition(self) -> Transition:
        return Transition.APPROVE if self is Decision.APPROVE else Transition.REJECT


class Kind(StrEnum):
    """The reviewer's principal kind."""

    USER = "user"
    AGENT = "agent"
    SERVICE = "service"

    @staticmethod
    def of(principal_kind: str) -> Kind:
        """An unknown kind counts as a service (as the gateway maps it): never a person."""
        try:
            return Kind(principal_kind)
        except ValueError:
            return Kind.SERVICE


class Hold(StrEnum):
    """Why a pending memory waits for review."""

    POLICY = "policy"  # the insert policy alone: an ordinary pending memory
    SAVE_INTENT = "save_intent"  # a claimed save intent its credential is not trusted for
    INSTRUCTION_LIKE = "instruction_like"  # its text reads as instructions to the model


# The holds only a person lifts: every hold but the insert policy's own.
PERSON_ONLY: frozenset[Hold] = frozenset({Hold.SAVE_INTENT, Hold.INSTRUCTION_LIKE})


class Verdict(StrEnum):
    ALLOWED = "allowed"
    PERSON_REQUIRED = "person_required"  # APPROVAL_REQUIRES_PERSON
    # Allowed unless the reviewer contributed its text (inserted it, or appended a turn)
    # and memory.allow_self_approval is off.
    NOT_OWN_UNLESS_CONFIGURED = "not_own_unless_configured"
    # Allowed only where memory.allow_service_review is on.
    IF_CONFIGURED = "if_configured"


def _person_only(hold: Hold) -> dict[tuple[Kind, Hold, Decision], Verdict]:
    return {
        (kind, hold, decision): Verdict.ALLOWED if kind is Kind.USER else Verdict.PERSON_REQUIRED
        for kind in Kind
        for decision in Decision
    }


RULES: Mapping[tuple[Kind, Hold, Decision], Verdict] = {
    (Kind.USER, Hold.POLICY, Decision.APPROVE): Verdict.ALLOWED,
    (Kind.USER, Hold.POLICY, Decision.REJECT): Verdict.ALLOWED,
    (Kind.AGENT, Hold.POLICY, Decision.APPROVE): Verdict.NOT_OWN_UNLESS_CONFIGURED,
    (Kind.AGENT, Hold.POLICY, Decision.REJECT): Verdict.ALLOWED,
    (Kind.SERVICE, Hold.POLICY, Decision.APPROVE): Verdict.IF_CONFIGURED,
    (Kind.SERVICE, Hold.POLICY, Decision.REJECT): Verdict.IF_CONFIGURED,
    **{row: v for hold in sorted(PERSON_ONLY) for row, v in _person_only(hold).items()},
}


@dataclass(frozen=True)
class Settings:
    """What the deployment allows beyond the table's fixed verdicts."""

    allow_self_approval: bool = False
    allow_service_review: bool = False


DEFAULTS = Settings()


def hold_of(source: Source) -> Hold:
    """Why a pending source waits: the first hold only a person lifts, else the policy."""
    if source.save_intent_held:
        return Hold.SAVE_INTENT
    if source.hold_reason == Hold.INSTRUCTION_LIKE:
        return Hold.INSTRUCTION_LIKE
    return Hold.POLICY


def authorize(
    source: Source,
    reviewer: Caller,
    decision: Decision,
    settings: Settings,
    appenders: frozenset[str] = frozenset(),
) -> None:
    """Raises unless `reviewer` may take `decision` on the pending `source`; `appenders`:
    the principals who appended turns to it (they contributed its text too)."""
    hold = hold_of(source)
    verdict = RULES[(Kind.of(reviewer.principal_kind), hold, decision)]
    if verdict is Verdict.ALLOWED:
        return
    if verdict is Verdict.NOT_OWN_UNLESS_CONFIGURED:
        contributors = appenders | {source.provenance.principal_id}
        own = reviewer.principal_id in contributors
        if own and not settings.allow_self_approval:
            raise AgentmemError(Reason.SELF_APPROVAL_DENIED)
        return
    if verdict is Verdict.IF_CONFIGURED and settings.allow_service_review:
        return
    raise AgentmemError(Reason.APPROVAL_REQUIRES_PERSON, metadata={"hold": hold.value})


def review(
    source: Source,
    *,
    expected_revision: int,
    decision: Decision,
    reviewer: Caller,
    note: str,
    settings: Settings,
    now_us: int,
    appenders: frozenset[str] = frozenset(),
) -> Source:
    if len(note) > MAX_NOTE or "\x00" in note:
        raise invalid_field("note", f"must be at most {MAX_NOTE} characters")
    lifecycle.refuse_terminal(source.phase)
    check_revision(source, expected_revision)
    lifecycle.check(decision.transition, source.phase)
    authorize(source, reviewer, decision, settings, appenders)
    intent = source.save_intent
    if decision is Decision.APPROVE and reviewer.principal_kind == Kind.USER:
        intent = SaveIntent("user_confirmed", intent.source, "approved in review")
    return replace(
        source,
        revision=source.revision + 1,
        status=Status.ACTIVE if decision is Decision.APPROVE else Status.REJECTED,
        save_intent=intent,
        updated_at_us=now_us,
        review=Review(reviewer.principal_id, now_us, note),
    )
