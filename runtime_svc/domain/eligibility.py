"""Effective retrieval state: the one eligibility predicate (DESIGN §5).

The rules are data, in the order their reasons are reported: a source is eligible only if
no rule holds; otherwise its state is the first rule that holds. The order follows the
lifecycle (`domain.lifecycle`): a terminal phase first (erased, then revoked: a revoked
source that was pending or cold reads "revoked"), then the review status, then the
classification, then a foreign source's assent. Storage compiles the same
rules into SQL (`runtime_svc.storage.eligibility_sql`) so that search, prompt assembly,
explanation and listings all use this one definition; `effective_state` evaluates them on a
loaded row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class State(StrEnum):
    ELIGIBLE = "eligible"
    COLD = "cold"
    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    REVOKED = "revoked"
    ASSENT_INVALID = "assent_invalid"
    ASSENT_EXPIRED = "assent_expired"
    ERASED = "erased"


@dataclass(frozen=True)
class Equals:
    """Holds when `column` equals `value`."""

    column: str
    value: Any


@dataclass(frozen=True)
class IsSet:
    """Holds when `column` is set (non-zero)."""

    column: str


@dataclass(frozen=True)
class Expired:
    """Holds when the time in `column` (µs) is set and not later than now."""

    column: str


Condition = Equals | IsSet | Expired


@dataclass(frozen=True)
class Rule:
    state: State
    condition: Condition


RULES: tuple[Rule, ...] = (
    Rule(State.ERASED, Equals("status", "erased")),
    Rule(State.REVOKED, IsSet("revoked_at_us")),
    Rule(State.PENDING_REVIEW, Equals("status", "pending_review")),
    Rule(State.REJECTED, Equals("status", "rejected")),
    Rule(State.COLD, Equals("classification", "cold")),
    Rule(State.ASSENT_INVALID, Equals("assent_state", "invalid")),
    Rule(State.ASSENT_EXPIRED, Expired("assent_expires_at_us")),
)


def holds(condition: Condition, row: Mapping[str, Any], now_us: int | None) -> bool:
    """Whether the condition holds; with `now_us` None, time-dependent ones never do."""
    value = row[condition.column]
    if isinstance(condition, Equals):
        return bool(value == condition.value)
    if isinstance(condition, IsSet):
        return bool(value)
    return now_us is not None and bool(value) and value <= now_us


def effective_state(row: Mapping[str, Any], now_us: int) -> State:
    for rule in RULES:
        if holds(rule.condition, row, now_us):
            return rule.state
    return State.ELIGIBLE


def eligible_regardless_of_time(row: Mapping[str, Any]) -> bool:
    """Eligible unless a time-dependent rule holds: what the search index's eligibility
    token reflects. Time-dependent rules are checked inside the ranked query itself."""
    return all(not holds(rule.condition, row, None) for rule in RULES)


def reason_order(state: State) -> int:
    """Where a state's reason stands in the lifecycle order (eligible last)."""
    return next((i for i, rule in enumerate(RULES) if rule.state is state), len(RULES))
