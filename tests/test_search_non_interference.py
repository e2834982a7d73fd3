"""Non-interference of ineligible sources, through real servers, on every search plan.

A stateful property: whatever sequence of inserts (active, pending, cold), classification
flips, reviews, revocations and erasures a tenant goes through, what search and explanation
return for a query is a function of the tenant's *eligible* sources alone. Each time the set
of eligible sources is one seen before, every query's results (source ids, order, scores to
the last bit) must be exactly what they were then, however many cold, pending, rejected,
revoked or erased sources exist now. So a cold memory that shares words with an eligible
one changes neither its score nor its rank (ranking statistics count eligible entries only).

Plans: postings in the index tables, postings held in memory (every slot scored, and pruned
by MaxScore), and hybrid retrieval (vectors ranked exactly in memory, in SQL or by pgvector,
and by the coarse pass, which covers every vector of a tenant this small).
"""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agentmem.v1 import common_pb2, foreign_pb2, review_pb2, sources_pb2
from agentmem_kernel import config
from runtime_svc.retrieval import plan as search_plan
from tests.harness import Key
from tests.hybrid_support import hybrid_settings, wait_embedded
from tests.memory_helpers import ACTIVE, COLD, classify, explain, search

EXAMPLES = int(os.environ.get("AGENTMEM_FUZZ_EXAMPLES", "10"))
STEPS = int(os.environ.get("AGENTMEM_FUZZ_STEPS", "18"))
TENANTS = 4 * EXAMPLES + 40
WORDS = ["guitar", "garden", "coffee", "river", "piano", "winter", "bread", "ticket"]
QUERIES = ["guitar garden", "coffee river piano", "winter bread ticket guitar", "garden"]
ENDED = {"revoked", "erased"}


def _key(i: int) -> Key:
    return Key(f"tok-ni-{i}", "admin", f"ni-{i}", config.SCOPES)


class Tenant(RuleBasedStateMachine):
    stack = None  # set by the test
    tenants: itertools.count = itertools.count()
    hybrid = False

    def __init__(self) -> None:
        super().__init__()
        self.client = self.stack.client(_key(next(self.tenants)))
        self.state: dict[str, str] = {}  # source id -> eligible | cold | pending | ...
        self.revision: dict[str, int] = {}
        self.seen: dict[frozenset[str], dict[str, object]] = {}

    @initialize(
        first=st.lists(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=7), min_size=1, max_size=3
        )
    )
    def some_memories_then_pending_without_a_marker(self, first: list[list[str]]) -> None:
        for words in first:
            self._insert(words, pending=False)
        self.client.SetInsertPolicy(
            review_pb2.SetInsertPolicyRequest(
                expected_revision=0, insert_policy=common_pb2.INSERT_POLICY_REVIEW_PENDING
            )
        )

    def _insert(self, words: list[str], pending: bool) -> str:
        intent = "" if pending else "explicit_user_request"
        r = self.client.InsertMemory(
            sources_pb2.InsertMemoryRequest(
                content=" ".join(words), metadata=sources_pb2.InsertMetadata(save_intent=intent)
            )
        )
        self.state[r.source_id] = "pending" if pending else "eligible"
        self.revision[r.source_id] = r.revision
        return r.source_id

    def _pick(self, data, *states: str) -> str | None:  # type: ignore[no-untyped-def]
        found = [s for s, state in self.state.items() if state in states]  # insertion order
        return data.draw(st.sampled_from(found)) if found else None

    @rule(
        words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=7),
        how=st.sampled_from(["active", "pending", "cold"]),
    )
    def insert(self, words: list[str], how: str) -> None:
        sid = self._insert(words, pending=how == "pending")
        if how == "cold":  # a similar memory that was never eligible as far as search knows
            self.revision[sid] = classify(self.client, sid, self.revision[sid], COLD).revision
            self.state[sid] = "cold"

    @rule(data=st.data())
    def flip(self, data) -> None:  # type: ignore[no-untyped-def]
        sid = self._pick(data, "eligible", "cold")
        if sid is None:
            return
        to = COLD if self.state[sid] == "eligible" else ACTIVE
        self.revision[sid] = classify(self.client, sid, self.revision[sid], to).revision
        self.state[sid] = "cold" if to == COLD else "eligible"

    @rule(data=st.data(), approve=st.booleans())
    def review(self, data, approve: bool) -> None:  # type: ignore[no-untyped-def]
        sid = self._pick(data, "pending")
        if sid is None:
            return
        decision = review_pb2.DECISION_APPROVE if approve else review_pb2.DECISION_REJECT
        r = self.client.ReviewMemory(
            review_pb2.ReviewMemoryRequest(
                source_id=sid, expected_revision=self.revision[sid], decision=decision
            )
        )
        self.revision[sid] = r.revision
        self.state[sid] = "eligible" if approve else "rejected"

    @rule(data=st.data(), erase=st.booleans())
    def end(self, data, erase: bool) -> None:  # type: ignore[no-untyped-def]
        sid = self._pick(data, "eligible", "cold", "pending", "rejected")
        if sid is None:
            return
        if erase:
            self.client.EraseSource(
                foreign_pb2.EraseSourceRequest(source_id=sid, expected_revision=self.revision[sid])
            )
        else:
            self.client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=sid))
        self.state[sid] = "erased" if erase else "revoked"

    @precondition(lambda self: bool(self.state))
    @invariant()
    def results_depend_on_the_eligible_sources_alone(self) -> None:
        if self.hybrid:
            wait_embedded(self.client)
        eligible = frozenset(s for s, state in self.state.items() if state == "eligible")
        now: dict[str, object] = {}
        for q in QUERIES:
            hits = [(h.source_id, h.score) for h in search(self.client, q, 50).hits]
            assert {sid for sid, _ in hits} <= eligible, q
            ranked = [
                (e.source_id, e.rank, e.score)
                for e in explain(self.client, q, 50).entries
                if e.source_id in eligible
            ]
            now[q] = (hits, ranked)
        before = self.seen.setdefault(eligible, now)
        assert now == before, "an ineligible source changed an eligible one's score or rank"


PLANS = ["tables", "held", "held-pruned", "hybrid-memory", "hybrid-sql", "hybrid-coarse"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("plan", PLANS)
def test_ineligible_sources_never_move_an_eligible_source_s_score(
    make_stack, plan, request, monkeypatch
):
    more: dict[str, object] = {}
    if plan.startswith("held"):
        more = {"search__held_min_entries": 0}
        if plan == "held-pruned":
            monkeypatch.setattr(search_plan, "DENSE_MAX", 0)
    elif plan.startswith("hybrid"):
        request.getfixturevalue("local_model")
        request.getfixturevalue("vector_backend")
        more = hybrid_settings(retrieval__exact_search_max=0 if plan == "hybrid-coarse" else 10_000)
        if plan == "hybrid-sql":  # ranked in the statement (pgvector on PostgreSQL)
            monkeypatch.setattr(search_plan, "IN_MEMORY_MAX", 0)
    keys = [_key(i).config() for i in range(TENANTS)]
    stack = make_stack(auth__api_keys=keys, **more)
    Tenant.stack = stack
    Tenant.tenants = itertools.count()
    Tenant.hybrid = plan.startswith("hybrid")
    hybrid = plan.startswith("hybrid")
    run_state_machine_as_test(
        Tenant,
        settings=settings(
            max_examples=max(EXAMPLES // 2, 2) if hybrid else EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=True,
            # No shrinking: fresh tenants on the same servers; the first failing sequence
            # is short enough to read as it is.
            phases=[Phase.explicit, Phase.generate],
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
