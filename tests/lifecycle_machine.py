"""Model-based test of the source lifecycle, one machine with two doors: the runtime's use
cases (tests/service/test_lifecycle_model.py, by words: the index tables and the postings
held in memory) and the public API through real servers (tests/test_lifecycle_model.py, with
retrieval by meaning on).

Random sequences of inserts (every policy and save intent; the agent's credential is trusted
for client_auto_save only, so its other claims are held for review), appends to conversations
(the same policies and claims), classification, review (by a user and by the inserting
agent), revocation, assent revocation, erasure, foreign admission (valid and invalid assent)
and thread-mode changes run against a small model of what must hold; after every step every
retrieval surface is checked against the model:

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from tests.test_foreign import OWNER

EXAMPLES = int(os.environ.get("AGENTMEM_FUZZ_EXAMPLES", "20"))
STEPS = int(os.environ.get("AGENTMEM_FUZZ_STEPS", "24"))
POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
# Every example (shrinking included) gets a fresh tenant of its own.
TENANTS = max(4 * EXAMPLES, 200)
POLICIES = ("permissive", "require_save_intent", "review_pending")
# No marker is the interesting case (refused, pending or active by policy): drawn more often.
INTENTS = ("", "", "", "explicit_user_request", "user_confirmed", "client_auto_save", "bogus")
CALLERS = ("admin", "agent", "user")  # the agent: trusted for client_auto_save only
# A conversation has the marker in message 1 only: its passages are 0-1 and 1-2.
TALK = (
    ("assistant", "What lights your porch?", ""),
    ("user", "I like the lantern {word}", "Caroline"),
    ("assistant", "Sounds cosy, good night.", ""),
)


def marker(n: int) -> str:
    """A word no other source holds, of letters only (so stemming leaves it whole), with no
    long run shared with another marker (the erasure check looks for a part of it)."""
    digest = hashlib.sha256(str(n).encode()).digest()
    syllables = "".join("bcdfghjklmnpqrstvwxz"[b % 20] + "aeiou"[b // 20 % 5] for b in digest[:6])
    return f"zq{syllables}x"


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


# What a door answers, the same whichever door it is.


@dataclass(frozen=True)
class Saved:
    """An insert's or an append's answer."""

    source_id: str
    status: str  # active | pending_review
    held: bool  # the answer says the claim was held
    receipt_held: bool  # and so does its receipt
    receipt_intent: str = ""
    revision: int = 1
    messages: int = 0


@dataclass(frozen=True)
class Hit:
    source_id: str
    snippet: str
    passage: tuple[int, int] | None  # a conversation's message range


@dataclass(frozen=True)
class Explained:
    source_id: str
    reason: str  # the model's state: eligible, cold, pending_review, rejected, revoked
    included: bool
    scores: tuple[float, float, float]  # score, lexical, semantic


@dataclass(frozen=True)
class Readback:
    clean: bool
    unpurged: list[tuple[str, str]]
    retrievable_by: list[str]


class Refused(Exception):
    """A door's call was refused with the catalog's `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Door(Protocol):
    """One way into the runtime, for one tenant; every call raises `Refused` with the
    catalog's reason when it is refused."""

    tenant: str
    db_path: Path
    hybrid: bool  # passages by meaning may come too

    def sql(self, statement: str, **params: Any) -> list[tuple[Any, ...]]: ...
    def held_words(self) -> set[str]: ...
    def register_owner_key(self) -> None: ...
    def sign(self, claims: dict[str, Any]) -> str: ...
    def insert(
        self, by: str, content: str, messages: list[tuple[str, str, str]], thread: str, intent: str
    ) -> Saved: ...
    def append(self, by: str, source_id: str, expected: int, intent: str) -> Saved: ...
    def set_policy(self, expected: int, policy: str) -> None: ...
    def set_thread_mode(self, expected: int, disabled: bool) -> None: ...
    def classify(self, source_id: str, expected: int, cold: bool) -> int: ...
    def review(self, by: str, source_id: str, expected: int, approve: bool) -> None: ...
    def revoke(self, source_id: str) -> None: ...
    def erase(self, source_id: str, expected: int) -> None: ...
    def prepare(self, n: int, title: str) -> tuple[str, str, str]: ...
    def admit(self, n: int, title: str, assent: str) -> str: ...
    def revoke_assent(self, source_id: str, assent_id: str) -> None: ...
    def search(self, query: str, by_source: bool) -> list[Hit]: ...
    def assemble(self, query: str) -> tuple[set[str], str]: ...
    def search_facts(self, query: str) -> list[tuple[str, str, str]]: ...
    def profile(self) -> list[tuple[list[str], str]]: ...
    def ask(self, question: str) -> tuple[set[str], str]: ...
    def explain(self, query: str) -> list[Explained]: ...
    def read(self, source_id: str) -> tuple[str, str]: ...
    def listed(self, state: str) -> set[str]: ...
    def readback(self, source_id: str) -> Readback: ...
    def audit_chain_verifies(self) -> bool: ...


class LifecycleMachine(RuleBasedStateMachine):
    # Set by the test: makes the door of a fresh tenant (its number given).
    door_of: ClassVar[Callable[[int], Door]]
    tenants: ClassVar[Iterator[int]]

    def __init__(self) -> None:
        super().__init__()
        i = next(self.tenants)
        self.door = type(self).door_of(i)
        self.tenant = self.door.tenant
        self.sources: list[Model] = []
        self.mutations = 0
        self.policy = ("permissive", 0)
        self.thread_disabled = (False, 0)
        self.counter = itertools.count(i * 10_000)
        self.door.register_owner_key()  # one mutation
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
        except Refused as e:
            assert e.reason in reasons, (e.reason, reasons)
        else:
            raise AssertionError(f"expected one of {reasons}")
        assert self._journal_size() == before  # refused: no event, no receipt

    def _journal(self) -> tuple[int, ...]:
        """In one statement (one snapshot; the runtime journals finished erasures in the
        background on PostgreSQL): events, their first and last sequence, events of
        finished erasures, receipts, receipts of finished erasures."""
        return tuple(
            self.door.sql(
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

    @initialize(policy=st.sampled_from(POLICIES))
    def start_under(self, policy: str) -> None:
        if policy != "permissive":
            self._set_policy(policy, stale=False)

    def insert(self, data) -> None:  # type: ignore[no-untyped-def]
        by = data.draw(st.sampled_from(CALLERS))
        intent = data.draw(st.sampled_from(INTENTS))
        threaded = data.draw(st.booleans())
        conversation = data.draw(st.booleans())
        word = marker(next(self.counter))
        talk = [(role, text.format(word=word), name) for role, text, name in TALK]
        call = lambda: self.door.insert(  # noqa: E731
            by,
            "" if conversation else f"I like the lantern {word}",
            talk if conversation else [],
            "t1" if threaded else "",
            intent,
        )
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
        assert (r.held, r.receipt_held) == (held, held)
        assert r.receipt_intent == intent
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
        by = data.draw(st.sampled_from(CALLERS))
        intent = data.draw(st.sampled_from(INTENTS))
        stale = data.draw(st.integers(0, 3)) == 0
        m = self._pick(data, prefer=lambda m: m.conversation)
        if m is None:
            return
        expected = m.revision + (4 if stale else 0)
        call = lambda: self.door.append(by, m.source_id, expected, intent)  # noqa: E731
        refused = append_refusal(m, intent, stale, self.policy[0], self.thread_disabled[0])
        if refused:
            return self._refused(call, refused)
        r = call()
        held = appended(m, by, intent, self.policy[0])
        assert r.status == m.status
        assert (r.revision, r.messages, r.held, r.receipt_held) == (
            m.revision + 1,
            m.turns + 1,
            held,
            held,
        )
        m.revision, m.turns = m.revision + 1, m.turns + 1
        self.mutations += 1

    def set_policy(self, data) -> None:  # type: ignore[no-untyped-def]
        self._set_policy(data.draw(st.sampled_from(POLICIES)), data.draw(st.booleans()))

    def _set_policy(self, policy: str, stale: bool) -> None:
        revision = self.policy[1]
        expected = revision + (7 if stale else 0)
        call = lambda: self.door.set_policy(expected, policy)  # noqa: E731
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        call()
        self.policy = (policy, revision + 1)
        self.mutations += 1

    def set_thread_mode(self, data) -> None:  # type: ignore[no-untyped-def]
        disabled = data.draw(st.booleans())
        revision = self.thread_disabled[1]
        self.door.set_thread_mode(revision, disabled)
        self.thread_disabled = (disabled, revision + 1)
        self.mutations += 1

    def classify(self, data) -> None:  # type: ignore[no-untyped-def]
        cold, stale = data.draw(st.booleans()), data.draw(st.booleans())
        m = self._pick(data, prefer=lambda m: m.revoked)
        if m is None:
            return
        expected = m.revision + (5 if stale else 0)
        call = lambda: self.door.classify(m.source_id, expected, cold)  # noqa: E731
        if m.erased:
            return self._refused(call, "SOURCE_ERASED")
        if m.revoked:
            return self._refused(call, "SOURCE_REVOKED")
        if stale:
            return self._refused(call, "REVISION_MISMATCH")
        assert call() == m.revision + 1
        m.classification, m.revision = ("cold" if cold else "active"), m.revision + 1
        self.mutations += 1

    def review(self, data) -> None:  # type: ignore[no-untyped-def]
        approve = data.draw(st.booleans())
        by = data.draw(st.sampled_from(["user", "agent"]))
        m = self._pick(data, lambda m: m.kind == "memory", lambda m: m.status == "pending_review")
        if m is None:
            return
        call = lambda: self.door.review(by, m.source_id, m.revision, approve)  # noqa: E731
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
        call = lambda: self.door.revoke(m.source_id)  # noqa: E731
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
        expected = m.revision + (3 if stale else 0)
        call = lambda: self.door.erase(m.source_id, expected)  # noqa: E731
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
        title = f"lantern roster {word}"
        source_id, audience, digest = self.door.prepare(n, title)
        now = int(time.time())
        claims = {
            "iss": OWNER,
            "sub": source_id,
            "aud": audience,
            "digest": digest,
            "iat": now,
            "exp": now + 3600,
            "jti": f"assent-{n}",
        }
        token = self.door.sign(claims)
        if not valid:
            token = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        self.mutations += 1  # an admission, or a denial's receipt and event
        if not valid:
            try:
                self.door.admit(n, title, token)
            except Refused as e:
                assert e.reason == "ASSENT_INVALID"
                return
            raise AssertionError("a forged assent was accepted")
        admitted = self.door.admit(n, title, token)
        self.sources.append(Model(admitted, word, "foreign", "admin", assent_id=f"assent-{n}"))

    def revoke_assent(self, data) -> None:  # type: ignore[no-untyped-def]
        m = self._pick(data, lambda m: m.kind == "foreign")
        if m is None:
            return
        call = lambda: self.door.revoke_assent(m.source_id, m.assent_id)  # noqa: E731
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
        door = self.door
        eligible = {m.source_id for m in self.sources if m.eligible}
        banned = [m.marker for m in self.sources if not m.eligible]
        hits = door.search("lantern", by_source=True)
        assert {h.source_id for h in hits} == eligible
        assert not any(b in h.snippet for h in hits for b in banned)
        # Passages: only eligible sources', each conversation's (those holding message 1).
        passages = door.search("lantern", by_source=False)
        assert {h.source_id for h in passages} == eligible
        assert not any(b in h.snippet for h in passages for b in banned)
        talks = {m.source_id for m in self.sources if m.eligible and m.conversation}
        ranges = sorted((h.source_id, *h.passage) for h in passages if h.passage)
        by_words = sorted((s, a, b) for s in talks for a, b in ((0, 1), (1, 2)))
        if door.hybrid:  # by meaning too: other passages of the eligible conversations
            assert set(by_words) <= set(ranges) and {s for s, _, _ in ranges} <= talks
        else:
            assert ranges == by_words

        cited, context = door.assemble("lantern")
        assert cited == eligible
        assert not any(b in context for b in banned)

        memory_sources = {m.source_id for m in self.sources if m.eligible and m.kind == "memory"}
        found = door.search_facts("lantern")
        assert {source for _, source, _ in found} == memory_sources
        assert not any(b in statement for _, _, statement in found for b in banned)

        eligible_facts = {fact for fact, _, _ in found}
        profile = door.profile()
        assert {i for ids, _ in profile for i in ids} <= eligible_facts
        assert not any(b in value for _, value in profile for b in banned)

        cited, answer = door.ask("which lantern")
        assert cited <= eligible
        assert not any(b in answer for b in banned)
        assert bool(cited) == bool(eligible)

        # What a purge removed from the index is not held in the runtime's memory either.
        purged = {m.marker for m in self.sources if m.revoked}
        assert not purged & door.held_words()

    @invariant()
    def explanation_covers_every_match(self) -> None:
        entries = self.door.explain("lantern")
        got = {e.source_id: e.reason for e in entries}
        assert got == {m.source_id: m.state for m in self.sources if not m.erased}
        filtered = [e for e in entries if not e.included and e.reason != "eligible"]
        assert all(e.scores == (0, 0, 0) for e in filtered)

    @invariant()
    def reads_report_the_lifecycle_state(self) -> None:
        """A source's read and the listings (filtered by the state) name each source's
        state and status as the model does: erased as erased, never as revoked."""
        for m in self.sources:
            assert self.door.read(m.source_id) == (m.state, m.shown_status), m
        for state in ("erased", "revoked"):
            expected = {m.source_id for m in self.sources if m.state == state}
            assert self.door.listed(state) == expected

    @invariant()
    def ended_sources_stay_clean(self) -> None:
        for m in self.sources:
            if m.revoked:
                r = self.door.readback(m.source_id)
                assert r.clean, r.unpurged
                assert r.retrievable_by == []

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
        counter = self.door.sql(
            "SELECT indexed_docs FROM tenant_state WHERE tenant_id = :t", t=self.tenant
        )[0][0]
        real = self.door.sql(
            "SELECT count(*) FROM sources WHERE tenant_id = :t AND indexed_revision > 0",
            t=self.tenant,
        )[0][0]
        assert counter == real
        assert self.door.audit_chain_verifies()

    def _check_erased_text_is_gone(self, m: Model) -> None:
        like = f"%{m.marker}%"
        for table, column in (
            ("sources", "raw"),
            ("sources", "generated_form"),
            ("source_turns", "rows"),
            ("facts", "statement"),
            ("facts", "object"),
        ):
            rows = self.door.sql(f"SELECT count(*) FROM {table} WHERE {column} LIKE :m", m=like)
            assert rows[0][0] == 0, table
        if not POSTGRES:
            needle = m.marker[3:].encode()  # FTS5 keeps terms prefix-compressed
            path = self.door.db_path
            for p in path.parent.glob(path.name + "*"):
                assert needle not in p.read_bytes(), p.name


def run(door_of: Callable[[int], Door], examples: int = EXAMPLES) -> None:
    """The machine, a fresh tenant per example (each a door `door_of` makes)."""
    LifecycleMachine.door_of = door_of
    LifecycleMachine.tenants = itertools.count()
    run_state_machine_as_test(
        LifecycleMachine,
        settings=settings(
            max_examples=examples,
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
