"""The source lifecycle's model-based test through real servers (the machine and what it
checks: tests/lifecycle_machine.py), with retrieval by meaning on: words and meaning, the
vector side by its coarse pass (vectors held in memory), whether or not the indexer has
embedded a source yet. By words alone the same machine runs on the use cases
(tests/service/test_lifecycle_model.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc
import pytest

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
from tests import lifecycle_machine
from tests.harness import Key, reason, words_held_in_memory
from tests.hybrid_support import hybrid_settings
from tests.lifecycle_machine import (
    EXAMPLES,
    OWNER,
    TENANTS,
    Explained,
    Hit,
    Readback,
    Refused,
    Saved,
)
from tests.test_foreign import Owner

T = TypeVar("T")
POLICIES = {
    "permissive": common_pb2.INSERT_POLICY_PERMISSIVE,
    "require_save_intent": common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT,
    "review_pending": common_pb2.INSERT_POLICY_REVIEW_PENDING,
}
REASONS = {
    retrieval_pb2.REASON_SELECTED: "eligible",
    retrieval_pb2.REASON_COLD: "cold",
    retrieval_pb2.REASON_PENDING_REVIEW: "pending_review",
    retrieval_pb2.REASON_REJECTED: "rejected",
    retrieval_pb2.REASON_REVOKED: "revoked",
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


class GrpcDoor:
    """The machine's door through the gateway, with each caller's own credential."""

    hybrid = True

    def __init__(self, stack: Any, i: int) -> None:
        ks = keys(i)
        self.stack = stack
        self.tenant = ks["admin"].tenant
        self.db_path = stack.db_path
        self.c = {name: stack.client(k) for name, k in ks.items()}
        self.admin = self.c["admin"]
        self.owner: Owner | None = None

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except grpc.RpcError as e:
            raise Refused(reason(e)) from None

    def sql(self, statement: str, **params: Any) -> list[tuple[Any, ...]]:
        return self.stack.sql(statement, **params)

    def held_words(self) -> set[str]:
        return words_held_in_memory([self.stack.runtime.mirrors])

    def register_owner_key(self) -> None:
        self.owner = Owner(self.admin)

    def sign(self, claims: dict[str, Any]) -> str:
        assert self.owner is not None
        return self.owner.sign(claims)

    def insert(
        self, by: str, content: str, messages: list[tuple[str, str, str]], thread: str, intent: str
    ) -> Saved:
        request = sources_pb2.InsertMemoryRequest(
            content=content,
            messages=[sources_pb2.Message(role=r, content=t, name=n) for r, t, n in messages],
            thread_id=thread,
            metadata=sources_pb2.InsertMetadata(save_intent=intent),
        )
        r = self._call(lambda: self.c[by].InsertMemory(request))
        return Saved(
            r.source_id,
            enum_name(sources_pb2.Status, "STATUS_", r.status),
            r.save_intent_held,
            r.receipt.save_intent_held,
            receipt_intent=r.receipt.save_intent,
        )

    def append(self, by: str, source_id: str, expected: int, intent: str) -> Saved:
        request = sources_pb2.AppendMessagesRequest(
            source_id=source_id,
            expected_revision=expected,
            messages=[sources_pb2.Message(role="user", content="Thanks, sleep well.")],
            metadata=sources_pb2.InsertMetadata(save_intent=intent),
        )
        r = self._call(lambda: self.c[by].AppendMessages(request))
        return Saved(
            source_id,
            enum_name(sources_pb2.Status, "STATUS_", r.status),
            r.save_intent_held,
            r.receipt.save_intent_held,
            revision=r.revision,
            messages=r.message_count,
        )

    def set_policy(self, expected: int, policy: str) -> None:
        request = review_pb2.SetInsertPolicyRequest(
            insert_policy=POLICIES[policy], expected_revision=expected
        )
        self._call(lambda: self.admin.SetInsertPolicy(request))

    def set_thread_mode(self, expected: int, disabled: bool) -> None:
        mode = common_pb2.MEMORY_MODE_DISABLED if disabled else common_pb2.MEMORY_MODE_ENABLED
        request = thread_mode_pb2.SetThreadMemoryModeRequest(
            thread_id="t1", expected_revision=expected, mode=mode
        )
        self._call(lambda: self.admin.SetThreadMemoryMode(request))

    def classify(self, source_id: str, expected: int, cold: bool) -> int:
        target = sources_pb2.CLASSIFICATION_COLD if cold else sources_pb2.CLASSIFICATION_ACTIVE
        request = sources_pb2.SetSourceClassificationRequest(
            source_id=source_id, expected_revision=expected, classification=target
        )
        return self._call(lambda: self.admin.SetSourceClassification(request)).revision

    def review(self, by: str, source_id: str, expected: int, approve: bool) -> None:
        request = review_pb2.ReviewMemoryRequest(
            source_id=source_id,
            expected_revision=expected,
            decision=review_pb2.DECISION_APPROVE if approve else review_pb2.DECISION_REJECT,
        )
        self._call(lambda: self.c[by].ReviewMemory(request))

    def revoke(self, source_id: str) -> None:
        request = foreign_pb2.RevokeSourceRequest(source_id=source_id)
        self._call(lambda: self.admin.RevokeSource(request))

    def erase(self, source_id: str, expected: int) -> None:
        request = foreign_pb2.EraseSourceRequest(source_id=source_id, expected_revision=expected)
        self._call(lambda: self.admin.EraseSource(request))

    def _pointer(self, n: int, title: str) -> foreign_pb2.ThinPointer:
        return foreign_pb2.ThinPointer(
            uri=f"https://wiki.example/pages/{n}",
            content_digest=f"{n:064x}",
            media_type="text/html",
            title=title,
            descriptor="",
        )

    def prepare(self, n: int, title: str) -> tuple[str, str, str]:
        pointer = self._pointer(n, title)
        prep = self.admin.PrepareForeignSource(
            foreign_pb2.PrepareForeignSourceRequest(canonical_owner=OWNER, pointer=pointer)
        )
        return prep.source_id, prep.audience, pointer.content_digest

    def admit(self, n: int, title: str, assent: str) -> str:
        request = foreign_pb2.AdmitForeignSourceRequest(
            canonical_owner=OWNER, pointer=self._pointer(n, title), assent=assent
        )
        return self._call(lambda: self.admin.AdmitForeignSource(request)).source_id

    def revoke_assent(self, source_id: str, assent_id: str) -> None:
        request = foreign_pb2.RevokeAssentRequest(source_id=source_id, assent_id=assent_id)
        self._call(lambda: self.admin.RevokeAssent(request))

    def search(self, query: str, by_source: bool) -> list[Hit]:
        request = retrieval_pb2.SearchMemoriesRequest(
            query=query, limit=100, group_by_source=by_source
        )
        return [
            Hit(
                h.source_id,
                h.snippet,
                (h.passage.message_start, h.passage.message_end) if h.HasField("passage") else None,
            )
            for h in self.admin.SearchMemories(request).hits
        ]

    def assemble(self, query: str) -> tuple[set[str], str]:
        prompt = self.admin.AssemblePrompt(
            retrieval_pb2.AssemblePromptRequest(query=query, thread_id="t9", token_budget=50_000)
        )
        return {c.source_id for c in prompt.citations}, prompt.context

    def search_facts(self, query: str) -> list[tuple[str, str, str]]:
        found = self.admin.SearchFacts(facts_pb2.SearchFactsRequest(query=query, limit=100))
        return [(f.fact_id, f.source_id, f.statement) for f in found.facts]

    def profile(self) -> list[tuple[list[str], str]]:
        entries = self.admin.GetProfile(facts_pb2.GetProfileRequest()).entries
        return [(list(e.fact_ids), e.value) for e in entries]

    def ask(self, question: str) -> tuple[set[str], str]:
        answer = self.admin.Ask(facts_pb2.AskRequest(question=question, token_budget=5_000))
        return {c.source_id for c in answer.citations}, answer.answer

    def explain(self, query: str) -> list[Explained]:
        request = retrieval_pb2.ExplainRetrievalRequest(query=query, limit=100)
        return [
            Explained(
                e.source_id,
                REASONS[e.reason],
                e.included,
                (e.score, e.lexical_score, e.semantic_score),
            )
            for e in self.admin.ExplainRetrieval(request).entries
        ]

    def read(self, source_id: str) -> tuple[str, str]:
        got = self.admin.GetSource(sources_pb2.GetSourceRequest(source_id=source_id))
        state = enum_name(
            sources_pb2.EffectiveRetrievalState,
            "EFFECTIVE_RETRIEVAL_STATE_",
            got.effective_retrieval_state,
        )
        return state, enum_name(sources_pb2.Status, "STATUS_", got.status)

    def listed(self, state: str) -> set[str]:
        wanted = sources_pb2.EffectiveRetrievalState.Value(
            "EFFECTIVE_RETRIEVAL_STATE_" + state.upper()
        )
        request = sources_pb2.ListSourcesRequest(
            page_size=1000, filter=sources_pb2.SourceFilter(effective_state=wanted)
        )
        return {s.source_id for s in self.admin.ListSources(request).sources}

    def readback(self, source_id: str) -> Readback:
        r = self.admin.ReadbackSource(foreign_pb2.ReadbackSourceRequest(source_id=source_id))
        unpurged = [(d.kind, d.state) for d in r.derivatives if d.state != "purged"]
        return Readback(r.clean, unpurged, list(r.retrievable_by))

    def audit_chain_verifies(self) -> bool:
        return self.admin.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).ok


@pytest.mark.timeout(900)
def test_no_sequence_of_operations_brings_an_ended_source_back_with_hybrid_retrieval(
    make_stack, local_model, vector_backend
):
    all_keys = [k for i in range(TENANTS) for k in keys(i).values()]
    more = hybrid_settings(retrieval__exact_search_max=0)
    stack = make_stack(auth__api_keys=[k.config() for k in all_keys], **more)
    # Each step embeds the query with the real model: half the examples.
    lifecycle_machine.run(lambda i: GrpcDoor(stack, i), examples=EXAMPLES // 2)
