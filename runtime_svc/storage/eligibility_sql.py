"""The eligibility rules (`runtime_svc.domain.eligibility.RULES`) compiled to SQL, so the
predicate runs inside the statement that ranks or lists, never after it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, false, literal, not_
from sqlalchemy.sql import ColumnCollection

from runtime_svc.domain.eligibility import RULES, Condition, Equals, IsSet, State

Columns = ColumnCollection[str, ColumnElement[Any]]


def _holds(
    condition: Condition, cols: Columns, now: ColumnElement[int] | None
) -> ColumnElement[bool]:
    col = cols[condition.column]
    if isinstance(condition, Equals):
        return col == literal(condition.value)
    if isinstance(condition, IsSet):
        return col != 0
    if now is None:  # as `eligibility.holds`: without a time, a time-dependent rule never holds
        return false()
    return and_(col != 0, col <= now)


def state(cols: Columns, now: ColumnElement[int]) -> ColumnElement[str]:
    """The effective retrieval state: 'eligible' or the first reason it is not."""
    return case(
        *[(_holds(r.condition, cols, now), r.state.value) for r in RULES],
        else_=State.ELIGIBLE.value,
    )


def eligible(cols: Columns, now: ColumnElement[int]) -> ColumnElement[bool]:
    return and_(*[not_(_holds(r.condition, cols, now)) for r in RULES])


def eligible_regardless_of_time(cols: Columns) -> ColumnElement[bool]:
    """Eligible unless a time-dependent rule holds (`eligibility.eligible_regardless_of_time`):
    what derived records computed at write time (index scope, fact chains) follow."""
    return and_(*[not_(_holds(r.condition, cols, None)) for r in RULES])
