"""The source lifecycle as data: the phases a source can be in, the transitions between them,
what each requires, what it fails with, and what it does to derived records.

Every change of a source is one of these transitions, applied by one service function
(`runtime_svc.services.source_changes`). `revoked` and `erased` are terminal: no transition
leads from them back to eligibility; the content can come back only as a new source (a new
insert, or for a foreign source a new admission under a new identity).

Retrieval eligibility itself is the eligibility predicate (`eligibility.RULES`); the phase
here is the part of a source's state that transitions are allowed or refused on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agentmem.contract.errors import AgentmemError, FieldViolation, Reason


class Phase(StrEnum):
    """Where a source stands in its lifecycle (classification and assent sit beside it)."""

    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    ACTIVE = "active"  # approved or inserted active: it has derived records (cold or not)
    REVOKED = "revoked"
    ERASED = "erased"


class Transition(StrEnum):
    INSERT = "insert"
    ADMIT = "admit"
    CLASSIFY = "classify"
    APPROVE = "approve"
    REJECT = "reject"
    READMIT = "readmit"  # a foreign source's fresh assent for the same identity
    INVALIDATE_ASSENT = "invalidate_assent"  # the owner key it was admitted under retired
    REVOKE = "revoke"
    REVOKE_ASSENT = "revoke_assent"
    ERASE = "erase"
    APPEND = "append"  # a conversation's next messages (a session that grows)
    ERASE_TURNS = "erase_turns"  # the turns one principal appended, erased (partial erasure)


class Derived(StrEnum):
    """What a transition does to the source's derived records."""

    BUILD = "build"  # derive them (index entry, facts, …): the source becomes active
    KEEP = "keep"  # keep them; their scope follows the new eligibility
    PURGE = "purge"  # delete every one of them (the registry lists them all)
    ERASE = "erase"  # purge, and destroy the stored bytes too
    # Derive the new part only: the appended messages' passages, vectors and facts are
    # added, the others kept as they were (a question that ended the conversation keeps
    # its passage without the answer appended after it; with `passages.before` 1 or more,
    # the default, the answer's passage holds both).
    # A source without derived records (pending review) gets none: approval builds them.
    EXTEND = "extend"
    # Delete every one of them with the erased bytes (a partial erasure), then derive them
    # again from what is left, if it is active: no record keeps a trace of the erased part.
    REBUILD = "rebuild"


class Eligibility(StrEnum):
    """What a transition does to retrieval eligibility."""

    FOLLOWS = "follows"  # the eligibility predicate decides on the new state
    ENDS = "ends"  # never eligible again: the phase is terminal


@dataclass(frozen=True)
class Rule:
    transition: Transition
    allowed_from: frozenset[Phase]
    refused_with: Reason  # from a non-terminal phase outside allowed_from
    derived: Derived
    why: str = ""  # the refusal's words for `source_id`, when the reason needs them

    @property
    def eligibility(self) -> Eligibility:
        ends = self.derived in (Derived.PURGE, Derived.ERASE)
        return Eligibility.ENDS if ends else Eligibility.FOLLOWS


_LIVE = frozenset({Phase.PENDING_REVIEW, Phase.REJECTED, Phase.ACTIVE})

RULES: dict[Transition, Rule] = {
    r.transition: r
    for r in (
        Rule(Transition.INSERT, frozenset(), Reason.INVALID_FIELD, Derived.BUILD),
        Rule(Transition.ADMIT, frozenset(), Reason.INVALID_FIELD, Derived.BUILD),
        Rule(Transition.CLASSIFY, _LIVE, Reason.INVALID_FIELD, Derived.KEEP),
        Rule(
            Transition.APPROVE,
            frozenset({Phase.PENDING_REVIEW}),
            Reason.NOT_PENDING_REVIEW,
            Derived.BUILD,
        ),
        Rule(
            Transition.REJECT,
            frozenset({Phase.PENDING_REVIEW}),
            Reason.NOT_PENDING_REVIEW,
            Derived.KEEP,
        ),
        Rule(Transition.READMIT, _LIVE, Reason.ASSENT_REVOKED, Derived.KEEP),
        Rule(
            Transition.INVALIDATE_ASSENT,
            _LIVE,
            Reason.INVALID_FIELD,
            Derived.KEEP,
        ),
        # Revoking a revoked source again is allowed: it re-runs the purge and is recorded.
        Rule(Transition.REVOKE, _LIVE | {Phase.REVOKED}, Reason.INVALID_FIELD, Derived.PURGE),
        Rule(
            Transition.REVOKE_ASSENT,
            _LIVE | {Phase.REVOKED},
            Reason.INVALID_FIELD,
            Derived.PURGE,
        ),
        Rule(Transition.ERASE, _LIVE | {Phase.REVOKED}, Reason.INVALID_FIELD, Derived.ERASE),
        # Cold stays cold (its new records are as ineligible as its old); a pending source
        # stays pending. A rejected memory takes nothing more.
        Rule(Transition.ERASE_TURNS, _LIVE, Reason.INVALID_FIELD, Derived.REBUILD),
        Rule(
            Transition.APPEND,
            frozenset({Phase.ACTIVE, Phase.PENDING_REVIEW}),
            Reason.INVALID_FIELD,
            Derived.EXTEND,
            why="a rejected memory takes no appended messages",
        ),
    )
}

TERMINAL: dict[Phase, Reason] = {
    Phase.REVOKED: Reason.SOURCE_REVOKED,
    Phase.ERASED: Reason.SOURCE_ERASED,
}


def check(transition: Transition, phase: Phase) -> Rule:
    """The rule of a transition from `phase`, or the stable error that refuses it."""
    rule = RULES[transition]
    if phase in rule.allowed_from:
        return rule
    if phase in TERMINAL:
        raise AgentmemError(TERMINAL[phase])
    if rule.why:
        raise AgentmemError(rule.refused_with, violations=(FieldViolation("source_id", rule.why),))
    raise AgentmemError(rule.refused_with)


def refuse_terminal(phase: Phase) -> None:
    """Refuses any change of a revoked or erased source (checked before its revision)."""
    if phase in TERMINAL:
        raise AgentmemError(TERMINAL[phase])
