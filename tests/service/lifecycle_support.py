"""A source's lifecycle through the use cases: classify, review, revoke, erase, read back."""

from __future__ import annotations

from runtime_svc.composition import UseCases
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import Classification
from runtime_svc.services.source_lifecycle import (
    Changed,
    ClassifyCommand,
    EraseCommand,
    Readback,
    ReviewCommand,
)
from tests.service.wiring import caller

A = caller()
ACTIVE, COLD = Classification.ACTIVE, Classification.COLD


def classify(
    cases: UseCases, source_id: str, expected: int, to: Classification, who: Caller = A
) -> Changed:
    return cases.lifecycle.classify(who, ClassifyCommand(source_id, expected, to))


def review(
    cases: UseCases, who: Caller, source_id: str, expected: int, decision: Decision, note: str = ""
) -> Changed:
    """As the runtime reviews: an approval's facts are read from the memory first (outside
    the write)."""
    triples = cases.lifecycle.triples_of(who, source_id) if decision is Decision.APPROVE else []
    cmd = ReviewCommand(source_id, expected, decision, note, tuple(triples))
    return cases.lifecycle.review(who, cmd)


def revoke(cases: UseCases, source_id: str, who: Caller = A, reason: str = "") -> Changed:
    return cases.lifecycle.revoke(who, source_id, reason)


def erase(cases: UseCases, source_id: str, expected: int, who: Caller = A) -> Changed:
    return cases.lifecycle.erase(who, EraseCommand(source_id, expected))


def readback(cases: UseCases, source_id: str, who: Caller = A) -> Readback:
    return cases.lifecycle.readback(who, source_id)


def supersessions(cases: UseCases, source_id: str) -> list:  # type: ignore[type-arg]
    return [d for d in readback(cases, source_id).derivatives if d.kind == "supersession"]
