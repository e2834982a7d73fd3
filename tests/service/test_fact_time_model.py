"""Model-based test of facts over time on the use cases.

Random statements about a few attributes (where the user and their sister live, where the
user works: one value at a time; what the user likes: many), said at random times and
inserted in random order, some of them ends of a value ("I no longer live in Lisbon"),
with erasures, cold/active flips and retractions in between. After every step, for every
attribute of every subject:

- the current value (a fact search, by default) is the latest eligible, non-retracted
  statement's;
- the history (with superseded facts) is exactly the model's intervals: contiguous where one
  value replaced another, never overlapping, restatements opening none;
- what was current at past times (as_of) is the model's;
- so no statement changed any other attribute or subject.

`make check` and `make test` run a few examples; `make fuzz` runs many more (AGENTMEM_FUZZ_EXAMPLES,
AGENTMEM_FUZZ_STEPS), on SQLite or, with AGENTMEM_TEST_DATABASE_URL, PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from agentmem_kernel import config
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.fact_chains import Period
from runtime_svc.domain.sources import Classification
from runtime_svc.services.fact_retraction import RetractCommand
from runtime_svc.services.facts import FactQuery
from runtime_svc.services.source_lifecycle import ClassifyCommand, EraseCommand
from tests.service.facts_support import at_us, day_of, say
from tests.service.wiring import Service

EXAMPLES = max(int(os.environ.get("AGENTMEM_FUZZ_EXAMPLES", "20")) // 2, 1)
STEPS = int(os.environ.get("AGENTMEM_FUZZ_STEPS", "24"))
DAYS = range(0, 40, 5)

# attribute → (how it is said, how its end is said, its values, holds one value at a time)
ATTRIBUTES = {
    ("user", "lives in"): ("I live in {}", "I no longer live in {}", "Lisbon Berlin Porto", True),
    ("user's sister", "lives in"): (
        "My sister lives in {}",
        "My sister doesn't live in {} anymore",
        "Lisbon Faro",
        True,
    ),
    ("user", "works at"): ("I work at {}", "I don't work at {} anymore", "Google Spotify", True),
    ("user", "likes"): ("I like {}", "I don't like {} anymore", "jazz opera", False),
}


def caller(i: int) -> Caller:
    return Caller(f"facts-{i}", "owner", "user", frozenset(config.SCOPES))


@dataclass
class Said:
    source_id: str
    fact_id: str
    attribute: tuple[str, str]
    value: str
    day: int
    seq: int
    ends: bool
    revision: int = 1
    cold: bool = False
    erased: bool = False
    retracted: bool = False

    @property
    def live(self) -> bool:
        return not (self.cold or self.erased or self.retracted)

    @property
    def chain(self) -> tuple[str, str, str]:
        """The attribute's chain: one per attribute, or per value for a multi-valued one."""
        single = ATTRIBUTES[self.attribute][3]
        return (*self.attribute, "" if single else self.value)


def intervals(statements: list[Said]) -> list[tuple[str, int, int | None]]:
    """The model: one chain's intervals (value, from, to) from its live statements."""
    out: list[list] = []
    current: str | None = None
    for s in sorted((s for s in statements if s.live), key=lambda s: (s.day, s.seq)):
        if s.ends:
            if current == s.value:
                out[-1][2], current = s.day, None
        elif current != s.value:
            if current is not None:
                out[-1][2] = s.day
            out.append([s.value, s.day, None])
            current = s.value
    return [tuple(i) for i in out]


def _when(interval: tuple) -> tuple:  # type: ignore[type-arg]
    """Intervals in time order; two statements at one time make an empty interval first."""
    _, start, end = interval
    return (start, float("inf") if end is None else end)


def in_order(facts: list) -> list[tuple[str, float, float | None]]:  # type: ignore[type-arg]
    found = [(f.triple.object, day_of(f.valid_from_us), day_of(f.valid_to_us)) for f in facts]
    return sorted(found, key=_when)


class FactTimeMachine(RuleBasedStateMachine):
    service: Service  # set by the test
    tenants = None

    def __init__(self) -> None:
        super().__init__()
        self.c = caller(next(self.tenants))
        self.cases = self.service.cases
        self.said: list[Said] = []
        self.seq = itertools.count()

    @initialize()
    def nothing_said_yet(self) -> None:
        assert self._history() == {}

    @rule(
        attribute=st.sampled_from(sorted(ATTRIBUTES)),
        pick=st.integers(0, 2),
        day=st.sampled_from(list(DAYS)),
        ends=st.sampled_from([False, False, False, True]),
    )
    def say(self, attribute, pick, day, ends) -> None:  # type: ignore[no-untyped-def]
        affirm, end, choices, _ = ATTRIBUTES[attribute]
        value = choices.split()[pick % len(choices.split())]
        r = say(self.cases, (end if ends else affirm).format(value), day, who=self.c)
        (fact_id,) = self.service.sql(
            "SELECT fact_id FROM facts WHERE source_id = :s", s=r.source_id
        )[0]
        self.said.append(Said(r.source_id, fact_id, attribute, value, day, next(self.seq), ends))

    @rule(data=st.data())
    def erase(self, data) -> None:  # type: ignore[no-untyped-def]
        s = self._pick(data, lambda s: not s.erased)
        if s is not None:
            self.cases.lifecycle.erase(self.c, EraseCommand(s.source_id, s.revision))
            s.erased, s.revision = True, s.revision + 1

    @rule(data=st.data())
    def flip(self, data) -> None:  # type: ignore[no-untyped-def]
        s = self._pick(data, lambda s: not s.erased)
        if s is not None:
            target = Classification.ACTIVE if s.cold else Classification.COLD
            self.cases.lifecycle.classify(self.c, ClassifyCommand(s.source_id, s.revision, target))
            s.cold, s.revision = not s.cold, s.revision + 1

    @rule(data=st.data())
    def retract(self, data) -> None:  # type: ignore[no-untyped-def]
        s = self._pick(data, lambda s: not s.erased and not s.retracted)
        if s is not None:
            self.cases.retraction.retract(self.c, RetractCommand(s.fact_id))
            s.retracted = True

    def _pick(self, data, pred) -> Said | None:  # type: ignore[no-untyped-def]
        found = [s for s in self.said if pred(s)]
        return data.draw(st.sampled_from(found)) if found else None

    # what the use cases say

    def _facts(self, *, history: bool = False, as_of: int | None = None) -> list:
        period = Period(0 if as_of is None else at_us(as_of), history)
        return self.cases.facts.search(self.c, FactQuery(limit=100, period=period))

    def _history(self) -> dict[tuple[str, str, str], list[tuple[str, float, float | None]]]:
        by_chain: dict[tuple[str, str, str], list] = {}
        for f in self._facts(history=True):
            t = f.triple
            single = ATTRIBUTES[(t.subject, t.predicate)][3]
            chain = (t.subject, t.predicate, "" if single else t.object)
            by_chain.setdefault(chain, []).append(f)
        return {chain: in_order(found) for chain, found in by_chain.items()}

    def _model(self) -> dict[tuple[str, str, str], list[tuple[str, int, int | None]]]:
        chains: dict[tuple[str, str, str], list[Said]] = {}
        for s in self.said:
            chains.setdefault(s.chain, []).append(s)
        modelled = {chain: intervals(statements) for chain, statements in chains.items()}
        return {chain: sorted(found, key=_when) for chain, found in modelled.items() if found}

    # what must hold after every step

    @invariant()
    def the_history_is_the_models_intervals(self) -> None:
        got, expected = self._history(), self._model()
        assert got == expected
        for found in got.values():  # never overlapping, in time order
            for (_, _, end), (_, start, _) in itertools.pairwise(found):
                assert end is not None and end <= start

    @invariant()
    def the_current_value_is_the_latest_live_statements(self) -> None:
        expected = sorted(
            (chain[0], chain[1], found[-1][0])
            for chain, found in self._model().items()
            if found[-1][2] is None
        )
        got = sorted((f.triple.subject, f.triple.predicate, f.triple.object) for f in self._facts())
        assert got == expected
        singles = [(s, p) for s, p, _ in got if ATTRIBUTES[(s, p)][3]]
        assert len(singles) == len(set(singles))  # one value at a time

    @invariant()
    def what_was_current_then_is_the_models(self) -> None:
        model = self._model()
        for day in (0, 12, 25):
            expected = sorted(
                (chain[0], chain[1], value)
                for chain, found in model.items()
                for value, start, end in found
                if start <= day and (end is None or end > day)
            )
            got = sorted(
                (f.triple.subject, f.triple.predicate, f.triple.object)
                for f in self._facts(as_of=day)
            )
            assert got == expected, day


@pytest.mark.timeout(900)
def test_the_current_value_is_always_the_latest_eligible_statement(make_service):
    FactTimeMachine.service = make_service()
    FactTimeMachine.tenants = itertools.count()
    run_state_machine_as_test(
        FactTimeMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],  # fresh tenants: no shrinking
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
