"""The source lifecycle's model-based test on the use cases (the machine and what it checks:
tests/lifecycle_machine.py), ranked from the index tables and from postings held in memory;
the same machine runs through the servers with retrieval by meaning on
(tests/test_lifecycle_model.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
from tests import lifecycle_machine
from tests.harness import words_held_in_memory
from tests.lifecycle_machine import OWNER, Explained, Hit, Readback, Refused, Saved
from tests.service.wiring import Service

T = TypeVar("T")


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


@contextmanager
def _refusals() -> Iterator[None]:
    try:
        yield
    except AgentmemError as e:
        raise Refused(e.reason.value) from None


class UseCaseDoor:
    """The machine's door through the runtime's use cases, as its servicer calls them."""

    hybrid = False

    def __init__(self, service: Service, i: int) -> None:
        self.service, self.cases = service, service.cases
        self.c = callers(i)
        self.admin = self.c["admin"]
        self.tenant = self.admin.tenant_id
        self.db_path = service.db_path
        self.key = Ed25519PrivateKey.generate()

    def _call(self, fn: Callable[[], T]) -> T:
        with _refusals():
            return fn()

    def sql(self, statement: str, **params: Any) -> list[tuple[Any, ...]]:
        return self.service.sql(statement, **params)

    def held_words(self) -> set[str]:
        return words_held_in_memory([self.service.mirrors])

    def register_owner_key(self) -> None:
        pem = (
            self.key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        self.cases.foreign.register_key(self.admin, OWNER, "k1", pem)

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self.key, algorithm="EdDSA", headers={"kid": "k1"})

    def insert(
        self, by: str, content: str, messages: list[tuple[str, str, str]], thread: str, intent: str
    ) -> Saved:
        cmd = InsertCommand(
            content=content,
            messages=[Message(role, text, name) for role, text, name in messages],
            thread_id=thread,
            intent=SaveIntent(intent),
        )
        r = self._call(lambda: self.cases.inserts.insert(self.c[by], cmd))
        assert r.receipt is not None
        return Saved(
            r.source_id,
            r.status,
            bool(r.held_reason),
            r.receipt.save_intent_held,
            receipt_intent=r.receipt.save_intent,
        )

    def append(self, by: str, source_id: str, expected: int, intent: str) -> Saved:
        cmd = AppendCommand(
            source_id, expected, (Message("user", "Thanks, sleep well."),), SaveIntent(intent)
        )
        r = self._call(lambda: self.cases.appends.append(self.c[by], cmd))
        return Saved(
            source_id,
            r.source.status.value,
            bool(r.held_reason),
            r.receipt.save_intent_held,
            revision=r.source.revision,
            messages=len(r.source.body.messages),
        )

    def set_policy(self, expected: int, policy: str) -> None:
        self._call(
            lambda: self.cases.inserts.set_policy(self.admin, expected, InsertPolicy(policy))
        )

    def set_thread_mode(self, expected: int, disabled: bool) -> None:
        mode = Mode.DISABLED if disabled else Mode.ENABLED
        self._call(lambda: self.cases.thread_modes.set(self.admin, "t1", expected, mode))

    def classify(self, source_id: str, expected: int, cold: bool) -> int:
        target = Classification.COLD if cold else Classification.ACTIVE
        cmd = ClassifyCommand(source_id, expected, target)
        return self._call(lambda: self.cases.lifecycle.classify(self.admin, cmd)).source.revision

    def review(self, by: str, source_id: str, expected: int, approve: bool) -> None:
        who, lifecycle = self.c[by], self.cases.lifecycle
        decision = Decision.APPROVE if approve else Decision.REJECT

        def call() -> object:  # as the runtime reviews: an approval's facts read first
            triples = lifecycle.triples_of(who, source_id) if approve else []
            return lifecycle.review(
                who, ReviewCommand(source_id, expected, decision, "", tuple(triples))
            )

        self._call(call)

    def revoke(self, source_id: str) -> None:
        self._call(lambda: self.cases.lifecycle.revoke(self.admin, source_id, ""))

    def erase(self, source_id: str, expected: int) -> None:
        cmd = EraseCommand(source_id, expected)
        self._call(lambda: self.cases.lifecycle.erase(self.admin, cmd))

    def _pointer(self, n: int, title: str) -> Pointer:
        return Pointer(
            uri=f"https://wiki.example/pages/{n}",
            content_digest=f"{n:064x}",
            media_type="text/html",
            title=title,
            descriptor="",
        )

    def prepare(self, n: int, title: str) -> tuple[str, str, str]:
        pointer = self._pointer(n, title)
        source_id, audience = self.cases.foreign.prepare(self.admin, OWNER, pointer)
        return source_id, audience, pointer.content_digest

    def admit(self, n: int, title: str, assent: str) -> str:
        cmd = AdmitCommand(OWNER, self._pointer(n, title), assent)
        return self._call(lambda: self.cases.foreign.admit(self.admin, cmd)).source_id

    def revoke_assent(self, source_id: str, assent_id: str) -> None:
        cmd = RevokeAssentCommand(source_id, assent_id)
        self._call(lambda: self.cases.lifecycle.revoke_assent(self.admin, cmd))

    def search(self, query: str, by_source: bool) -> list[Hit]:
        hits = self.cases.retrieval.search(self.admin, query, "", 100, group_by_source=by_source)
        return [
            Hit(h.source_id, h.snippet, (h.passage.start, h.passage.end) if h.passage else None)
            for h in hits
        ]

    def assemble(self, query: str) -> tuple[set[str], str]:
        block = self.cases.retrieval.assemble(self.admin, query, "t9", 50_000).block
        return {c.source_id for c in block.cited}, block.context

    def search_facts(self, query: str) -> list[tuple[str, str, str]]:
        found = self.cases.facts.search(
            self.admin, FactQuery(query=query, limit=100, period=Period())
        )
        return [(f.fact_id, f.source_id, f.triple.statement) for f in found]

    def profile(self) -> list[tuple[list[str], str]]:
        return [(list(e.fact_ids), e.value) for e in self.cases.facts.profile(self.admin, "")]

    def ask(self, question: str) -> tuple[set[str], str]:
        answer = self.cases.facts.ask(self.admin, question, 5_000)
        return {p.source_id for p in answer.pieces}, answer.text

    def explain(self, query: str) -> list[Explained]:
        entries = self.cases.retrieval.explain(self.admin, query, "", 100).entries
        return [
            Explained(
                e.source_id,
                "eligible" if e.reason == "selected" else e.reason,
                e.included,
                (e.score, e.lexical_score, e.semantic_score),
            )
            for e in entries
        ]

    def read(self, source_id: str) -> tuple[str, str]:
        source, state = self.cases.reads.get(self.admin, source_id, False)
        return state, source.status.value

    def listed(self, state: str) -> set[str]:
        found, _ = self.cases.reads.list_sources(
            self.admin, SourceFilter(effective_state=state), 1000, ""
        )
        return {s.source_id for s in found}

    def readback(self, source_id: str) -> Readback:
        r = self.cases.lifecycle.readback(self.admin, source_id)
        unpurged = [(d.kind, d.state) for d in r.derivatives if d.state != "purged"]
        return Readback(r.clean, unpurged, list(r.retrievable_by))

    def audit_chain_verifies(self) -> bool:
        return self.cases.audit.verify(self.admin).ok


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
    service = make_service(**more)
    lifecycle_machine.run(lambda i: UseCaseDoor(service, i))
