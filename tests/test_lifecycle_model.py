"""Model-based test of the source lifecycle through real servers, with retrieval by meaning
on (by words alone, the same machine runs on the use cases: tests/service/
test_lifecycle_model.py, which imports the model from here).

Random sequences of inserts (every policy and save intent; the agent's key is trusted for
client_auto_save only, so its other claims are held for review), appends to conversations
(the same policies and claims), classification, review (by a
user and by the inserting agent), revocation, assent revocation, erasure, foreign admission
(valid and invalid assent) and thread-mode changes run against a small model of what must
hold; after every step every retrieval surface is checked against the model:

- search, prompt assembly, ask, fact search and profile return exactly the eligible sources
  and never a marker planted in an ineligible one;
- explanation lists every matching source that is not erased, with the model's reason;
- a revoked or erased source's readback is clean, and stays clean; erased text is in no table;
- every acknowledged mutation has one event and one receipt, sequences are gapless, the audit
  chain verifies, and the indexed-document counter equals the real count;
- refused operations change nothing.

`make test` runs a fixed seed and a bounded number of examples; `make fuzz` runs it longer
(AGENTMEM_FUZZ_EXAMPLES, AGENTMEM_FUZZ_STEPS).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from dataclasses import dataclass

import grpc
import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from agentmem.client.methods import enum_name
from agentmem.v1 import (
    audit_pb2,
    common_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from agentmem_kernel import config
from tests.harness import Key, reason, words_held_in_memory
from tests.hybrid_support import hybrid_settings
from tests.test_foreign import OWNER, Owner

EXAMPLES = int(os.environ.get("AGENTMEM_FUZZ_EXAMPLES", "20"))
STEPS = int(os.environ.get("AGENTMEM_FUZZ_STEPS", "24"))
POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
# Every example (shrinking included) gets a fresh tenant of its own.
TENANTS = max(4 * EXAMPLES, 200)
POLICIES = {
    "permissive": common_pb2.INSERT_POLICY_PERMISSIVE,
    "require_save_intent": common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT,
    "review_pending": common_pb2.INSERT_POLICY_REVIEW_PENDING,
}
# No marker is the interesting case (refused, pending or active by policy): drawn more often.
INTENTS = ("", "", "", "explicit_user_request", "user_confirmed", "client_auto_save", "bogus")
REASONS = {
    "eligible": retrieval_pb2.REASON_SELECTED,
    "cold": retrieval_pb2.REASON_COLD,
    "pending_review": retrieval_pb2.REASON_PENDING_REVIEW,
    "rejected": retrieval_pb2.REASON_REJECTED,
    "revoked": retrieval_pb2.REASON_REVOKED,
}


def keys(i: int) -> dict[str, Key]:
    tenant = f"model-{i}"
    return {
        "admin": Key(f"tok-admin-{i}", "admin", tenant, config.SCOPES),
        "agent": Key(
            f"tok-agent-{i}",
            "agent",
            tenant,
            ("memory.read", "memory.write", "memory.review"),
            kind="agent",
            trusted_save_intents=("client_auto_save",),
        ),
        "user": Key(
            f"tok-user-{i}",
            "user",
            tenant,
            ("memory.read", "memory.write", "memory.review", "memory.content.read"),
        ),
    }


def marker(n: int) -> str:
    """A word no other source holds, of letters only (so stemming leaves it whole), with no
    long run shared with another marker (the erasure check looks for a part of it)."""
    digest = hashlib.sha256(str(n).encode()).digest()
    syllables = "".join("bcdfghjklmnpqrstvwxz"[b % 20] + "aeiou"[b // 20 % 5] for b in digest[:6])
    return f"zq{syllables}x"


def append_refusal(m: Model, intent: str, stale: bool, policy: str, disabled: bool) -> str:
    """The reason an append to `m` is refused with, in the order the runtime checks ("": it
    is not)."""
    if intent == "bogus":
        return "SAVE_INTENT_INVALID"
    if m.erased:
        return "SOURCE_ERASED"
    if m.revoked:
        return "SOURCE_REVOKED"
    if stale:
        return "REVISION_MISMATCH"
    if m.status == "rejected" or not m.conversation:
        return "INVALID_FIELD"
    if not intent and policy == "require_save_intent":
        return "SAVE_INTENT_REQUIRED"
    if m.threaded and disabled:
        return "THREAD_MEMORY_DISABLED"
    return ""


def appended(m: Model, by: str, intent: str, policy: str) -> bool:
    """What an accepted append does to the model: what would hold an insert holds the
    conversation. Whether the claim was held (not trusted for the caller)."""
    held = by == "agent" and intent not in ("", "client_auto_save")
    if held or (not intent and policy == "review_pending"):
        m.status, m.held = "pending_review", m.held or held
    return held


@dataclass
class Model:
    source_id: str
    marker: str
    kind: str  # memory | foreign
    inserted_by: str
    status: str = "active"  # active | pending_review | rejected
    classification: str = "active"
    revoked: bool = False
    erased: bool = False
    revision: int = 1
    assent_id: str = ""
    conversation: bool = False  # inserted as messages (indexed as passages)
    held: bool = False  # a claim its credential was not trusted for: a person decides it
    threaded: bool = False  # inserted from thread t1
    turns: int = 3  # a conversation's messages

    @property
    def state(self) -> str:
        """The eligibility predicate's first reason, in lifecycle order: a terminal phase
        (erased, then revoked), then the review status, then the classification."""
        if self.erased:
            return "erased"
        if self.revoked:
            return "revoked"
        if self.status != "active":
            return self.status
        if self.classification == "cold":
            return "cold"
        return "eligible"

    @property
    def shown_status(self) -> str:
        """The review status a read reports: an erased source's is `erased`."""
        return "erased" if self.erased else self.status

    @property
    def eligible(self) -> bool:
        return self.state == "eligible" and not self.erased


class LifecycleMachine(RuleBasedStateMachine):
    stack = None  # set by the test
    tenants = None
    hybrid = False  # words and meaning: passages by meaning may come too
    mirrors: list = []  # the stack's runtime's postings held in memory (set by the test)

    def __init__(self) -> None:
        super().__init__()
        i = next(self.tenants)
        ks = keys(i)
        self.tenant = ks["admin"].tenant
        self.c = {name: self.stack.client(k) for name, k in ks.items()}
        self.sources: list[Model] = []
        self.mutations = 0
        self.policy = ("permissive", 0)
        self.thread_disabled = (False, 0)
        self.counter = itertools.count(i * 10_000)
        self.owner = Owner(self.c["admin"])  # registers a key: one mutation
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

    def _refused(self, call, *reasons: str) -> None:  # type: ignore[no-untyped-def]
        before = self._journal_size()
        try:
            call()
        except grpc.RpcError as e:
            assert reason(e) in reasons, (reason(e), reasons)
        else:
            raise AssertionError(f"expected one of {reasons}")
        assert self._journal_size() == before  # refused: no event, no receipt

    def _journal(self) -> tuple[int, ...]:
        """In one statement (one snapshot; the runtime journals finished erasures in the
        background on PostgreSQL): events, their first and last sequence, events of
        finished erasures, receipts, receipts of finished erasures."""
        return tuple(
            self.stack.sql(
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
        request = sources_pb2.InsertMemoryRequest(
            thread_id="t1" if threaded else "",
            metadata=sources_pb2.InsertMetadata(save_intent=intent),
        )
        if conversation:  # the marker in message 1 only: its passages are 0-1 and 1-2
            request.messages.extend(
                [
                    sources_pb2.Message(role="assistant", content="What lights your porch?"),
                    sources_pb2.Message(
                        role="user", content=f"I like the lantern {word}", name="Caroline"
                    ),
                    sources_pb2.Message(role="assistant", content="Sounds cosy, good night."),
                ]
            )
        else:
            request.content = f"I like the lantern {word}"
        call = lambda: self.c[by].InsertMemory(request)  # noqa: E731
        if intent == "bogus":
            return self._refused(call, "SAVE_INTENT_INVALID")
        if not intent and self.policy[0] == "require_save_intent":
            return self._refused(call, "SAVE_INTENT_REQUIRED")
        if threaded and self.thread_disabled[0]:
            return self._refused(call, "THREAD_MEMORY_DISABLED")
        r = call()
        held = by == "agent" and intent not in ("", "client_auto_save")
        pending = held or (not intent and self.policy[0] == "review_pending")
        assert r.status == (
            sources_pb2.STATUS_PENDING_REVIEW if pending else sources_pb2.STATUS_ACTIVE
        )
        assert (r.save_intent_held, r.receipt.save_intent_held) == (held, held)
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
        request = sources_pb2.AppendMessagesRequest(
            source_id=m.source_id,
            expected_revision=m.revision + (4 if stale else 0),
            messages=[sources_pb2.Message(role="user", content="Thanks, sleep well.")],
            metadata=sources_pb2.InsertMetadata(save_intent=intent),
        )
        call = lambda: self.c[by].AppendMessages(request)  # noqa: E731
        refused = append_refusal(m, intent, stale, self.policy[0], self.thread_disabled[0])
        if refused:
            return self._refused(call, refused)
        r = call()
        held = appended(m, by, intent, self.policy[0])
        assert r.status == (
            sources_pb2.STATUS_PENDING_REVIEW
            if m.status == "pending_review"
            else sources_pb2.STATUS_ACTIVE
        )
        assert (r.revision, r.message_count, r.save_intent_held) == (
            m.revision + 1,
            m.turns + 1,
            held,
        )
        m.revision, m.turns = m.revision + 1, m.turns + 1
        self.mutations += 1

    def set_policy(self, data) -> None:  # type: ignore[no-untyped-def]
        self._set_policy(data.draw(st.sampled_from(sorted(POLICIES))), data.draw(st.booleans()))

    def _set_policy(self, policy: str, stale: bool) -> None:
        revision = self.policy[1]
        request = review_pb2.SetInsertPolicyRequest(
            insert_policy=POLICIES[policy], expected_revision=revision + (7 if stale else 0)
        )
        if stale:
            return self._refused(
                lambda: self.c["admin"].SetInsertPolicy(request), "REVISION_MISMATCH"
            )
        self.c["admin"].SetInsertPolicy(request)
        self.policy = (policy, revision + 1)
        self.mutations += 1

    def set_thread_mode(self, data) -> None:  # type: ignore[no-untyped-def]
        disabled = data.draw(st.booleans())
        revision = self.thread_disabled[1]
        mode = common_pb2.MEMORY_MODE_DISABLED if disabled else common_pb2.MEMORY_MODE_ENABLED
        self.c["admin"].SetThreadMemoryMode(
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id="t1", expected_revision=revision, mode=mode
            )
        )
        self.thread_disabled = (disabled, revision + 1)
        self.mutations += 1

    def classify(self, data) -> None:  # type: ignore[no-untyped-def]
        cold, stale = data.draw(st.booleans()), data.draw(st.booleans())
        m = self._pick(data, prefer=lambda m: m.revoked)
        if m is None:
            return
        target = sources_pb2.CLASSIFICATION_COLD if cold else sources_pb2.CLASSIFICATION_ACTIVE
        request = sources_pb2.SetSourceClassificationRequest(
            source_id=m.source_id,
            expected_revision=m.revision + (5 if stale else 0),
            classification=target,
        )
        call = lambda: self.c["admin"].SetSourceClassification(request)  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        if m.revoked:
            return self._refused(call, "SOURCE_REVOKED")
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        assert call().revision == m.revision + 1
        m.classification, m.revision = ("cold" if cold else "active"), m.revision + 1
        self.mutations += 1

    def review(self, data) -> None:  # type: ignore[no-untyped-def]
        approve = data.draw(st.booleans())
        by = data.draw(st.sampled_from(["user", "agent"]))
        m = self._pick(data, lambda m: m.kind == "memory", lambda m: m.status == "pending_review")
        if m is None:
            return
        request = review_pb2.ReviewMemoryRequest(
            source_id=m.source_id,
            expected_revision=m.revision,
            decision=review_pb2.DECISION_APPROVE if approve else review_pb2.DECISION_REJECT,
        )
        call = lambda: self.c[by].ReviewMemory(request)  # noqa: E731
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
        call = lambda: self.c["admin"].RevokeSource(  # noqa: E731
            foreign_pb2.RevokeSourceRequest(source_id=m.source_id)
        )
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
        request = foreign_pb2.EraseSourceRequest(
            source_id=m.source_id, expected_revision=m.revision + (3 if stale else 0)
        )
        call = lambda: self.c["admin"].EraseSource(request)  # noqa: E731
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
        pointer = foreign_pb2.ThinPointer(
            uri=f"https://wiki.example/pages/{n}",
            content_digest=f"{n:064x}",
            media_type="text/html",
            title=f"lantern roster {word}",
            descriptor="",
        )
        admin = self.c["admin"]
        prep = admin.PrepareForeignSource(
            foreign_pb2.PrepareForeignSourceRequest(canonical_owner=OWNER, pointer=pointer)
        )
        now = int(time.time())
        claims = {
            "iss": OWNER,
            "sub": prep.source_id,
            "aud": prep.audience,
            "digest": pointer.content_digest,
            "iat": now,
            "exp": now + 3600,
            "jti": f"assent-{n}",
        }
        token = self.owner.sign(claims)
        if not valid:
            token = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        request = foreign_pb2.AdmitForeignSourceRequest(
            canonical_owner=OWNER, pointer=pointer, assent=token
        )
        self.mutations += 1  # an admission, or a denial's receipt and event
        if not valid:
            try:
                admin.AdmitForeignSource(request)
            except grpc.RpcError as e:
                assert reason(e) == "ASSENT_INVALID"
                return
            raise AssertionError("a forged assent was accepted")
        r = admin.AdmitForeignSource(request)
        self.sources.append(Model(r.source_id, word, "foreign", "admin", assent_id=f"assent-{n}"))

    def revoke_assent(self, data) -> None:  # type: ignore[no-untyped-def]
        m = self._pick(data, lambda m: m.kind == "foreign")
        if m is None:
            return
        call = lambda: self.c["admin"].RevokeAssent(  # noqa: E731
            foreign_pb2.RevokeAssentRequest(source_id=m.source_id, assent_id=m.assent_id)
        )
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
        admin = self.c["admin"]
        eligible = {m.source_id for m in self.sources if m.eligible}
        banned = [m.marker for m in self.sources if not m.eligible]
        hits = admin.SearchMemories(
            retrieval_pb2.SearchMemoriesRequest(query="lantern", limit=100)
        ).hits
        assert {h.source_id for h in hits} == eligible
        assert not any(b in h.snippet for h in hits for b in banned)
        # Passages: only eligible sources', each conversation's (those holding message 1).
        passages = admin.SearchMemories(
            retrieval_pb2.SearchMemoriesRequest(query="lantern", limit=100, group_by_source=False)
        ).hits
        assert {h.source_id for h in passages} == eligible
        assert not any(b in h.snippet for h in passages for b in banned)
        talks = {m.source_id for m in self.sources if m.eligible and m.conversation}
        ranges = sorted(
            (h.source_id, h.passage.message_start, h.passage.message_end)
            for h in passages
            if h.HasField("passage")
        )
        by_words = sorted((s, a, b) for s in talks for a, b in ((0, 1), (1, 2)))
        if self.hybrid:  # by meaning too: other passages of the eligible conversations
            assert set(by_words) <= set(ranges) and {s for s, _, _ in ranges} <= talks
        else:
            assert ranges == by_words

        prompt = admin.AssemblePrompt(
            retrieval_pb2.AssemblePromptRequest(
                query="lantern", thread_id="t9", token_budget=50_000
            )
        )
        assert {c.source_id for c in prompt.citations} == eligible
        assert not any(b in prompt.context for b in banned)

        memory_sources = {m.source_id for m in self.sources if m.eligible and m.kind == "memory"}
        found = admin.SearchFacts(facts_pb2.SearchFactsRequest(query="lantern", limit=100)).facts
        assert {f.source_id for f in found} == memory_sources
        assert not any(b in f.statement for f in found for b in banned)

        profile = admin.GetProfile(facts_pb2.GetProfileRequest()).entries
        eligible_facts = {f.fact_id for f in found}
        assert {i for e in profile for i in e.fact_ids} <= eligible_facts
        assert not any(b in e.value for e in profile for b in banned)

        answer = admin.Ask(facts_pb2.AskRequest(question="which lantern", token_budget=5_000))
        assert {c.source_id for c in answer.citations} <= eligible
        assert not any(b in answer.answer for b in banned)
        assert bool(answer.citations) == bool(eligible)

        # What a purge removed from the index is not held in the runtime's memory either.
        purged = {m.marker for m in self.sources if m.revoked}
        assert not purged & words_held_in_memory(self.mirrors)

    @invariant()
    def explanation_covers_every_match(self) -> None:
        entries = (
            self.c["admin"]
            .ExplainRetrieval(retrieval_pb2.ExplainRetrievalRequest(query="lantern", limit=100))
            .entries
        )
        got = {e.source_id: e.reason for e in entries}
        assert got == {m.source_id: REASONS[m.state] for m in self.sources if not m.erased}
        filtered = [e for e in entries if not e.included and e.reason != REASONS["eligible"]]
        assert all(e.score == e.lexical_score == e.semantic_score == 0 for e in filtered)

    @invariant()
    def reads_report_the_lifecycle_state(self) -> None:
        """GetSource and ListSources (filtered by the state) name each source's state and
        status as the model does: erased as erased, never as revoked."""
        admin = self.c["admin"]
        for m in self.sources:
            got = admin.GetSource(sources_pb2.GetSourceRequest(source_id=m.source_id))
            assert (
                enum_name(
                    sources_pb2.EffectiveRetrievalState,
                    "EFFECTIVE_RETRIEVAL_STATE_",
                    got.effective_retrieval_state,
                ),
                enum_name(sources_pb2.Status, "STATUS_", got.status),
            ) == (m.state, m.shown_status), m
        for state in ("erased", "revoked"):
            listed = admin.ListSources(
                sources_pb2.ListSourcesRequest(
                    page_size=1000,
                    filter=sources_pb2.SourceFilter(
                        effective_state=sources_pb2.EffectiveRetrievalState.Value(
                            "EFFECTIVE_RETRIEVAL_STATE_" + state.upper()
                        )
                    ),
                )
            ).sources
            assert {s.source_id for s in listed} == {
                m.source_id for m in self.sources if m.state == state
            }

    @invariant()
    def ended_sources_stay_clean(self) -> None:
        for m in self.sources:
            if m.revoked:
                r = self.c["admin"].ReadbackSource(
                    foreign_pb2.ReadbackSourceRequest(source_id=m.source_id)
                )
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
        counter = self.stack.sql(
            "SELECT indexed_docs FROM tenant_state WHERE tenant_id = :t", t=self.tenant
        )[0][0]
        real = self.stack.sql(
            "SELECT count(*) FROM sources WHERE tenant_id = :t AND indexed_revision > 0",
            t=self.tenant,
        )[0][0]
        assert counter == real
        assert self.c["admin"].VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).ok

    def _check_erased_text_is_gone(self, m: Model) -> None:
        like = f"%{m.marker}%"
        for table, column in (
            ("sources", "raw"),
            ("sources", "generated_form"),
            ("source_turns", "rows"),
            ("facts", "statement"),
            ("facts", "object"),
        ):
            rows = self.stack.sql(f"SELECT count(*) FROM {table} WHERE {column} LIKE :m", m=like)
            assert rows[0][0] == 0, table
        if not POSTGRES:
            needle = m.marker[3:].encode()  # FTS5 keeps terms prefix-compressed
            path = self.stack.db_path
            for p in path.parent.glob(path.name + "*"):
                assert needle not in p.read_bytes(), p.name


@pytest.mark.timeout(900)
def test_no_sequence_of_operations_brings_an_ended_source_back_with_hybrid_retrieval(
    make_stack, local_model, vector_backend
):
    """Through the servers, with retrieval by meaning on: words and meaning, the vector side
    by its coarse pass (vectors held in memory), whether or not the indexer has embedded a
    source yet. By words alone (the index tables, postings held in memory) the machine runs
    on the use cases (tests/service/test_lifecycle_model.py)."""
    all_keys = [k for i in range(TENANTS) for k in keys(i).values()]
    more = hybrid_settings(retrieval__exact_search_max=0)
    stack = make_stack(auth__api_keys=[k.config() for k in all_keys], **more)
    LifecycleMachine.stack = stack
    LifecycleMachine.mirrors = [stack.runtime.mirrors]
    LifecycleMachine.hybrid = True
    LifecycleMachine.tenants = itertools.count()
    run_state_machine_as_test(
        LifecycleMachine,
        settings=settings(
            # Each step embeds the query with the real model: half the examples.
            max_examples=EXAMPLES // 2,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=True,
            # No shrinking: every run talks to the same servers with fresh tenants, and the
            # first failing sequence is short enough to read as it is.
            phases=[Phase.explicit, Phase.generate],
            verbosity=Verbosity.verbose
            if os.environ.get("AGENTMEM_FUZZ_VERBOSE")
            else Verbosity.normal,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
