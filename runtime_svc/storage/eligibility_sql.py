"""The eligibility rules (`runtime_svc.domain.eligibility.RULES`) compiled to SQL, so the
predicate runs inside the statement that ranks or lists, never after it."""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, case, not_
from sqlalchemy.sql import ColumnCollection

from runtime_svc.domain.eligibility import RULES, Condition, Equals, IsSet, State


def _holds(
    condition: Condition, cols: ColumnCollection, now: ColumnElement[int]
) -> ColumnElement[bool]:
    col = cols[condition.column]
    if isinstance(condition, Equals):
        return col == condition.value
    if isinstance(condition, IsSet):
        return col != 0
    return and_(col != 0, col <= now)


def state(cols: ColumnCollection, now: ColumnElement[int]) -> ColumnElement[str]:
    """The effective retrieval state: 'eligible' or the first reason it is not."""
    return case(
        *[(_holds(r.condition, cols, now), r.state.value) for r in RULES],
        else_=State.ELIGIBLE.value,
    )


def eligible(cols: ColumnCollection, now: ColumnElement[int]) -> ColumnElement[bool]:
    return and_(*[not_(_holds(r.condition, cols, now)) for r in RULES])
