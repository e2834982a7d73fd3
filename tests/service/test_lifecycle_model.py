"""Model-based test of the source lifecycle on the use cases.

Random sequences of inserts (every policy and save intent; the agent's credential is trusted
for client_auto_save only, so its other claims are held for review), appends to conversations
(the same policies and claims), classification, review
(by a user and by the inserting agent), revocation, assent revocation, erasure, foreign
admission (valid and invalid assent) and thread-mode changes run against a small model of
what must hold; after every step every retrieval surface is checked against the model:

- search, prompt assembly, ask, fact search and profile return exactly the eligible sources
  and never a marker planted in an ineligible one;
- explanation lists every matching source that is not erased, with the model's reason;
- a revoked or erased source's readback is clean, and stays clean; erased text is in no table;
- every acknowledged mutation has one event and one receipt, sequences are gapless, the audit
  chain verifies, and the indexed-document counter equals the real count;
- refused operations change nothing.

Ranked from the index tables and from postings held in memory; the same machine with
retrieval by meaning on runs through the servers (tests/test_lifecycle_model.py).
`make check` runs a fixed seed and a bounded number of examples; `make fuzz` runs it longer
(AGENTMEM_FUZZ_EXAMPLES, AGENTMEM_FUZZ_STEPS).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError
from agentmem_kernel import config
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.fact_chains import Period
from runtime_svc.domain.foreign import Pointer
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import Classification, Message, SaveIntent
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.retrieval import plan
from runtime_svc.services.appends import AppendCommand
from runtime_svc.services.facts import FactQuery
from runtime_svc.services.foreign import AdmitCommand
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.services.source_lifecycle import (
    ClassifyCommand,
    EraseCommand,
    ReviewCommand,
    RevokeAssentCommand,
)
from runtime_svc.storage.source_pages import SourceFilter
from tests.harness import words_held_in_memory
from tests.service.wiring import Service
from tests.test_foreign import OWNER
from tests.test_lifecycle_model import (
    EXAMPLES,
    INTENTS,
    POLICIES,
    POSTGRES,
    STEPS,
    Model,
    append_refusal,
    appended,
    marker,
)

TENANTS = max(4 * EXAMPLES, 200)  # every example (shrinking included): a fresh tenant


def callers(i: int) -> dict[str, Caller]:
    tenant = f"model-{i}"
    return {
        "admin": Caller(tenant, "admin", "user", frozenset(config.SCOPES)),
        "agent": Caller(
            tenant,
            "agent",
            "agent",
            frozenset(("memory.read", "memory.write", "memory.review")),
            trusted_save_intents=frozenset(("client_auto_save",)),
        ),
        "user": Caller(
            tenant,
            "user",
            "user",
            frozenset(("memory.read", "memory.write", "memory.review", "memory.content.read")),
            trusted_save_intents=save_intents.ALL,
        ),
    }


class LifecycleMachine(RuleBasedStateMachine):
    service: Service  # set by the test
    tenants: Any = None

    def __init__(self) -> None:
        super().__init__()
        i = next(self.tenants)
        self.c = callers(i)
        self.tenant = self.c["admin"].tenant_id
        self.cases = self.service.cases
        self.sources: list[Model] = []
        self.mutations = 0
        self.policy = ("permissive", 0)
        self.thread_disabled = (False, 0)
        self.counter = itertools.count(i * 10_000)
        self.key = Ed25519PrivateKey.generate()
        pem = (
            self.key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        self.cases.foreign.register_key(self.c["admin"], OWNER, "k1", pem)  # one mutation
        self.mutations += 1

    # helpers

    def _pick(self, data, pred=lambda m: True, prefer=None) -> Model | None:  # type: ignore[no-untyped-def]
        """A source the rule may act on; half the time one of the `prefer`red ones, the
        sources where the rule's edge cases live (pending ones for review and revocation,
        ended ones for classification)."""
        found = [m for m in self.sources if pred(m)]
        preferred = [m for m in found if prefer and prefer(m)]
        if preferred and data.draw(st.booleans()):
            return data.draw(st.sampled_from(preferred))
        return data.draw(st.sampled_from(found)) if found else None

    def _refused(self, call: Callable[[], object], *reasons: str) -> None:
        before = self._journal_size()
        try:
            call()
        except AgentmemError as e:
            assert e.reason.value in reasons, (e.reason.value, reasons)
        else:
            raise AssertionError(f"expected one of {reasons}")
        assert self._journal_size() == before  # refused: no event, no receipt

    def _journal(self) -> tuple[int, ...]:
        """In one statement (one snapshot; erasures finished in the background on
        PostgreSQL are journalled by the runtime): events, their first and last sequence,
        events of finished erasures, receipts, receipts of finished erasures."""
        return tuple(
            self.service.sql(
                "SELECT (SELECT count(*) FROM events WHERE tenant_id = :t),"
                " (SELECT min(sequence) FROM events WHERE tenant_id = :t),"
                " (SELECT max(sequence) FROM events WHERE tenant_id = :t),"
                " (SELECT count(*) FROM events WHERE tenant_id = :t"
                "  AND kind = 'source_erasure_finished'),"
                " (SELECT count(*) FROM audit_receipts WHERE tenant_id = :t),"
                " (SELECT count(*) FROM audit_receipts WHERE tenant_id = :t"
                "  AND action = 'source.erase.finish')",
                t=self.tenant,
            )[0]
        )

    def _journal_size(self) -> tuple[int, int]:
        """Events and receipts of the callers' mutations (not the runtime's own)."""
        events, _, _, finished, receipts, finish_receipts = self._journal()
        return events - finished, receipts - finish_receipts

    # rules

    @initialize(policy=st.sampled_from(sorted(POLICIES)))
    def start_under(self, policy: str) -> None:
        if policy != "permissive":
            self._set_policy(policy, stale=False)

    def insert(self, data) -> None:  # type: ignore[no-untyped-def]
        by = data.draw(st.sampled_from(["agent", "user", "admin"]))
        intent = data.draw(st.sampled_from(INTENTS))
        threaded = data.draw(st.booleans())
        conversation = data.draw(st.booleans())
        word = marker(next(self.counter))
        said = f"I like the lantern {word}"
        # A conversation has the marker in message 1 only: its passages are 0-1 and 1-2.
        talk = [
            Message("assistant", "What lights your porch?"),
            Message("user", said, "Caroline"),
            Message("assistant", "Sounds cosy, good night."),
        ]
        cmd = InsertCommand(
            content="" if conversation else said,
            messages=talk if conversation else [],
            thread_id="t1" if threaded else "",
            intent=SaveIntent(intent),
        )
        call = lambda: self.cases.inserts.insert(self.c[by], cmd)  # noqa: E731
        if intent == "bogus":
            return self._refused(call, "SAVE_INTENT_INVALID")
        if not intent and self.policy[0] == "require_save_intent":
            return self._refused(call, "SAVE_INTENT_REQUIRED")
        if threaded and self.thread_disabled[0]:
            return self._refused(call, "THREAD_MEMORY_DISABLED")
        r = call()
        held = by == "agent" and intent not in ("", "client_auto_save")
        pending = held or (not intent and self.policy[0] == "review_pending")
        assert r.status == ("pending_review" if pending else "active")
        assert r.receipt is not None
        assert (bool(r.held_reason), r.receipt.save_intent_held) == (held, held)
        assert r.receipt.save_intent == intent
        self.sources.append(
            Model(
                r.source_id,
                word,
                "memory",
                by,
                "pending_review" if pending else "active",
                conversation=conversation,
                held=held,
                threaded=threaded,
            )
        )
        self.mutations += 1

    def append(self, data) -> None:  # type: ignore[no-untyped-def]
        """A session's next turn (no lantern in it: the retrieval checks stay as they are);
        what would hold an insert holds the conversation."""
        by = data.draw(st.sampled_from(["agent", "user", "admin"]))
        intent = data.draw(st.sampled_from(INTENTS))
        stale = data.draw(st.integers(0, 3)) == 0
        m = self._pick(data, prefer=lambda m: m.conversation)
        if m is None:
            return
        cmd = AppendCommand(
            m.source_id,
            m.revision + (4 if stale else 0),
            (Message("user", "Thanks, sleep well."),),
            SaveIntent(intent),
        )
        call = lambda: self.cases.appends.append(self.c[by], cmd)  # noqa: E731
        refused = append_refusal(m, intent, stale, self.policy[0], self.thread_disabled[0])
        if refused:
            return self._refused(call, refused)
        r = call()
        held = appended(m, by, intent, self.policy[0])
        assert r.source.status.value == m.status
        assert (r.source.revision, len(r.source.body.messages), bool(r.held_reason)) == (
            m.revision + 1,
            m.turns + 1,
            held,
        )
        assert r.receipt.save_intent_held == held
        m.revision, m.turns = m.revision + 1, m.turns + 1
        self.mutations += 1

    def set_policy(self, data) -> None:  # type: ignore[no-untyped-def]
        self._set_policy(data.draw(st.sampled_from(sorted(POLICIES))), data.draw(st.booleans()))

    def _set_policy(self, policy: str, stale: bool) -> None:
        revision = self.policy[1]
        expected = revision + (7 if stale else 0)
        call = lambda: self.cases.inserts.set_policy(  # noqa: E731
            self.c["admin"], expected, InsertPolicy(policy)
        )
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        call()
        self.policy = (policy, revision + 1)
        self.mutations += 1

    def set_thread_mode(self, data) -> None:  # type: ignore[no-untyped-def]
        disabled = data.draw(st.booleans())
        revision = self.thread_disabled[1]
        mode = Mode.DISABLED if disabled else Mode.ENABLED
        self.cases.thread_modes.set(self.c["admin"], "t1", revision, mode)
        self.thread_disabled = (disabled, revision + 1)
        self.mutations += 1

    def classify(self, data) -> None:  # type: ignore[no-untyped-def]
        cold, stale = data.draw(st.booleans()), data.draw(st.booleans())
        m = self._pick(data, prefer=lambda m: m.revoked)
        if m is None:
            return
        target = Classification.COLD if cold else Classification.ACTIVE
        cmd = ClassifyCommand(m.source_id, m.revision + (5 if stale else 0), target)
        call = lambda: self.cases.lifecycle.classify(self.c["admin"], cmd)  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        if m.revoked:
            return self._refused(call, "SOURCE_REVOKED")
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        assert call().source.revision == m.revision + 1
        m.classification, m.revision = ("cold" if cold else "active"), m.revision + 1
        self.mutations += 1

    def review(self, data) -> None:  # type: ignore[no-untyped-def]
        approve = data.draw(st.booleans())
        by = data.draw(st.sampled_from(["user", "agent"]))
        m = self._pick(data, lambda m: m.kind == "memory", lambda m: m.status == "pending_review")
        if m is None:
            return
        who = self.c[by]
        decision = Decision.APPROVE if approve else Decision.REJECT

        def call() -> object:  # as the runtime reviews: an approval's facts read first
            triples = self.cases.lifecycle.triples_of(who, m.source_id) if approve else []
            cmd = ReviewCommand(m.source_id, m.revision, decision, "", tuple(triples))
            return self.cases.lifecycle.review(who, cmd)

        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        if m.revoked:
            return self._refused(call, "SOURCE_REVOKED")
        if m.status != "pending_review":
            return self._refused(call, "NOT_PENDING_REVIEW")
        if by == "agent" and m.held:
            return self._refused(call, "APPROVAL_REQUIRES_PERSON")
        if approve and by == "agent" and m.inserted_by == "agent":
            return self._refused(call, "SELF_APPROVAL_DENIED")
        call()
        m.status, m.revision = ("active" if approve else "rejected"), m.revision + 1
        self.mutations += 1

    def revoke(self, data) -> None:  # type: ignore[no-untyped-def]
        m = self._pick(data, prefer=lambda m: m.status == "pending_review")
        if m is None:
            return
        call = lambda: self.cases.lifecycle.revoke(self.c["admin"], m.source_id, "")  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        call()
        if not m.revoked:
            m.revoked, m.revision = True, m.revision + 1
        self.mutations += 1

    def erase(self, data) -> None:  # type: ignore[no-untyped-def]
        stale = data.draw(st.booleans())
        m = self._pick(data, prefer=lambda m: m.status == "pending_review")
        if m is None:
            return
        cmd = EraseCommand(m.source_id, m.revision + (3 if stale else 0))
        call = lambda: self.cases.lifecycle.erase(self.c["admin"], cmd)  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        call()
        m.erased, m.revoked, m.revision = True, True, m.revision + 1
        self.mutations += 1
        self._check_erased_text_is_gone(m)

    def admit(self, data) -> None:  # type: ignore[no-untyped-def]
        if sum(m.kind == "foreign" for m in self.sources) >= 3:
            return
        valid = data.draw(st.booleans())
        n = next(self.counter)
        word = marker(n)
        pointer = Pointer(
            uri=f"https://wiki.example/pages/{n}",
            content_digest=f"{n:064x}",
            media_type="text/html",
            title=f"lantern roster {word}",
            descriptor="",
        )
        admin = self.c["admin"]
        source_id, audience = self.cases.foreign.prepare(admin, OWNER, pointer)
        now = int(time.time())
        claims = {
            "iss": OWNER,
            "sub": source_id,
            "aud": audience,
            "digest": pointer.content_digest,
            "iat": now,
            "exp": now + 3600,
            "jti": f"assent-{n}",
        }
        token = jwt.encode(claims, self.key, algorithm="EdDSA", headers={"kid": "k1"})
        if not valid:
            token = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        cmd = AdmitCommand(OWNER, pointer, token)
        self.mutations += 1  # an admission, or a denial's receipt and event
        if not valid:
            try:
                self.cases.foreign.admit(admin, cmd)
            except AgentmemError as e:
                assert e.reason.value == "ASSENT_INVALID"
                return
            raise AssertionError("a forged assent was accepted")
        r = self.cases.foreign.admit(admin, cmd)
        self.sources.append(Model(r.source_id, word, "foreign", "admin", assent_id=f"assent-{n}"))

    def revoke_assent(self, data) -> None:  # type: ignore[no-untyped-def]
        m = self._pick(data, lambda m: m.kind == "foreign")
        if m is None:
            return
        cmd = RevokeAssentCommand(m.source_id, m.assent_id)
        call = lambda: self.cases.lifecycle.revoke_assent(self.c["admin"], cmd)  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        call()
        if not m.revoked:
            m.revoked, m.revision = True, m.revision + 1
        self.mutations += 1

    # One rule draws which operation runs next: the most telling ones (insert, review,
    # revoke) are listed more than once, and first, where generation starts.
    OPS = (
        "insert",
        "revoke",
        "review",
        "insert",
        "erase",
        "review",
        "classify",
        "revoke",
        "admit",
        "revoke_assent",
        "set_policy",
        "insert",
        "set_thread_mode",
        "append",
        "append",
    )

    @rule(data=st.data(), op=st.sampled_from(OPS))
    def step(self, data, op: str) -> None:  # type: ignore[no-untyped-def]
        getattr(self, op)(data)

    # what must hold after every step

    @invariant()
    def retrieval_returns_exactly_the_eligible(self) -> None:
        admin, cases = self.c["admin"], self.cases
        eligible = {m.source_id for m in self.sources if m.eligible}
        banned = [m.marker for m in self.sources if not m.eligible]
        hits = cases.retrieval.search(admin, "lantern", "", 100)
        assert {h.source_id for h in hits} == eligible
        assert not any(b in h.snippet for h in hits for b in banned)
        # Passages: only eligible sources', each conversation's (those holding message 1).
        passages = cases.retrieval.search(admin, "lantern", "", 100, group_by_source=False)
        assert {h.source_id for h in passages} == eligible
        assert not any(b in h.snippet for h in passages for b in banned)
        talks = {m.source_id for m in self.sources if m.eligible and m.conversation}
        ranges = sorted(
            (h.source_id, h.passage.start, h.passage.end) for h in passages if h.passage
        )
        assert ranges == sorted((s, a, b) for s in talks for a, b in ((0, 1), (1, 2)))

        prompt = cases.retrieval.assemble(admin, "lantern", "t9", 50_000)
        assert {c.source_id for c in prompt.block.cited} == eligible
        assert not any(b in prompt.block.context for b in banned)

        memory_sources = {m.source_id for m in self.sources if m.eligible and m.kind == "memory"}
        found = cases.facts.search(admin, FactQuery(query="lantern", limit=100, period=Period()))
        assert {f.source_id for f in found} == memory_sources
        assert not any(b in f.triple.statement for f in found for b in banned)

        profile = cases.facts.profile(admin, "")
        eligible_facts = {f.fact_id for f in found}
        assert {i for e in profile for i in e.fact_ids} <= eligible_facts
        assert not any(b in e.value for e in profile for b in banned)

        answer = cases.facts.ask(admin, "which lantern", 5_000)
        assert {p.source_id for p in answer.pieces} <= eligible
        assert not any(b in answer.text for b in banned)
        assert bool(answer.pieces) == bool(eligible)

        # What a purge removed from the index is not held in the runtime's memory either.
        purged = {m.marker for m in self.sources if m.revoked}
        assert not purged & words_held_in_memory([self.service.mirrors])

    @invariant()
    def explanation_covers_every_match(self) -> None:
        entries = self.cases.retrieval.explain(self.c["admin"], "lantern", "", 100).entries
        got = {e.source_id: e.reason for e in entries}
        reason = {"eligible": "selected"}
        assert got == {
            m.source_id: reason.get(m.state, m.state) for m in self.sources if not m.erased
        }
        filtered = [e for e in entries if not e.included and e.reason != "selected"]
        assert all(e.score == e.lexical_score == e.semantic_score == 0 for e in filtered)

    @invariant()
    def reads_report_the_lifecycle_state(self) -> None:
        """A source's read and the listings (filtered by the state) name each source's
        state and status as the model does: erased as erased, never as revoked."""
        admin = self.c["admin"]
        for m in self.sources:
            source, state = self.cases.reads.get(admin, m.source_id, False)
            assert (state, source.status.value) == (m.state, m.shown_status), m
        for state in ("erased", "revoked"):
            listed, _ = self.cases.reads.list_sources(
                admin, SourceFilter(effective_state=state), 1000, ""
            )
            assert {s.source_id for s in listed} == {
                m.source_id for m in self.sources if m.state == state
            }

    @invariant()
    def ended_sources_stay_clean(self) -> None:
        for m in self.sources:
            if m.revoked:
                r = self.cases.lifecycle.readback(self.c["admin"], m.source_id)
                assert r.clean, [(d.kind, d.state) for d in r.derivatives if d.state != "purged"]
                assert list(r.retrievable_by) == []

    @invariant()
    def journal_and_counters_hold(self) -> None:
        events, first, last, finished, receipts, finish_receipts = self._journal()
        assert events - finished == receipts - finish_receipts == self.mutations
        assert (first, last) == ((1, events) if events else (None, None))
        # Each erasure's physical part is reported once it is done: at once on SQLite (no
        # outside reader here), after the background VACUUM on PostgreSQL.
        erased = sum(m.erased for m in self.sources)
        assert finished == finish_receipts
        assert finished <= erased if POSTGRES else finished == erased
        counter = self.service.sql(
            "SELECT indexed_docs FROM tenant_state WHERE tenant_id = :t", t=self.tenant
        )[0][0]
        real = self.service.sql(
            "SELECT count(*) FROM sources WHERE tenant_id = :t AND indexed_revision > 0",
            t=self.tenant,
        )[0][0]
        assert counter == real
        assert self.cases.audit.verify(self.c["admin"]).ok

    def _check_erased_text_is_gone(self, m: Model) -> None:
        like = f"%{m.marker}%"
        for table, column in (
            ("sources", "raw"),
            ("sources", "generated_form"),
            ("facts", "statement"),
            ("facts", "object"),
        ):
            rows = self.service.sql(f"SELECT count(*) FROM {table} WHERE {column} LIKE :m", m=like)
            assert rows[0][0] == 0, table
        if not POSTGRES:
            needle = m.marker[3:].encode()  # FTS5 keeps terms prefix-compressed
            path = self.service.db_path
            for p in path.parent.glob(path.name + "*"):
                assert needle not in p.read_bytes(), p.name


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "search", ["index tables", "postings held in memory"], ids=["tables", "held"]
)
def test_no_sequence_of_operations_brings_an_ended_source_back(make_service, search, monkeypatch):
    more: dict[str, object] = {}
    if search == "postings held in memory":
        more = {"search__held_min_entries": 0}
        # Pruned by MaxScore (as tenants with millions of postings are), which scores every
        # slot whenever pruning cannot tell: both ways of ranking held postings are run.
        monkeypatch.setattr(plan, "DENSE_MAX", 0)
    LifecycleMachine.service = make_service(**more)
    LifecycleMachine.tenants = itertools.count()
    run_state_machine_as_test(
        LifecycleMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=True,
            # No shrinking: every run uses the same database with fresh tenants, and the
            # first failing sequence is short enough to read as it is.
            phases=[Phase.explicit, Phase.generate],
            verbosity=Verbosity.verbose
            if os.environ.get("AGENTMEM_FUZZ_VERBOSE")
            else Verbosity.normal,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
