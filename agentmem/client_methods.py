"""One method per public RPC, with keyword arguments; shared by `Client` and `AsyncClient`.

Each method builds the request message and hands it to `self._call`, which sends it (and
returns the response, or for `AsyncClient` an awaitable of it). Enum arguments take the
short lower-case name (`"disabled"`, `"cold"`, `"approve"`) or the proto value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    common_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)

# The calls that are safe to repeat; InsertMemory joins them when it carries a request_id.
IDEMPOTENT = frozenset(
    {
        "GetCapabilities",
        "ReadThreadMemoryMode",
        "ListSources",
        "GetSource",
        "SearchMemories",
        "AssemblePrompt",
        "ExplainRetrieval",
        "ListMemories",
        "GetInsertPolicy",
        "SearchFacts",
        "GetProfile",
        "Ask",
        "PrepareForeignSource",
        "ReadbackSource",
        "ListAuditReceipts",
        "VerifyAuditChain",
        "WatchEvents",
    }
)


def enum_value(enum: EnumTypeWrapper, prefix: str, value: str | int | None) -> int:
    """`"disabled"`, `"MEMORY_MODE_DISABLED"` or the number itself; None/"" is unspecified."""
    if value is None or value == "":
        return 0
    if isinstance(value, int):
        return value
    name = value.upper()
    return enum.Value(name if name.startswith(prefix) else prefix + name)


def enum_name(enum: EnumTypeWrapper, prefix: str, value: int) -> str:
    """The short lower-case name of a proto enum value (`"disabled"`)."""
    return enum.Name(value).removeprefix(prefix).lower()


Moment = datetime | str | None


def timestamp_of(value: Moment) -> Timestamp | None:
    """A time argument: a datetime (naive ones are UTC) or an ISO 8601 string
    ("2024-06-01", "2024-06-01T09:30:00Z"); None leaves the field unset."""
    if value is None or value == "":
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ts = Timestamp()
    ts.FromDatetime(moment)
    return ts


def target_of(request: Any) -> str:
    """What a request is about, in ids only: used to say what was not found."""
    fields = request.DESCRIPTOR.fields_by_name
    for name, label in (("source_id", "source"), ("thread_id", "thread"), ("fact_id", "fact")):
        if name in fields and getattr(request, name):
            return f"{label} {getattr(request, name)}"
    if "key_id" in fields:
        return f"owner key {request.owner_id}/{request.key_id}"
    return ""


class Methods:
    """Typed keyword-argument methods for every unary RPC of agentmem.v1.MemoryService."""

    def _call(self, name: str, request: Any, timeout: float | None) -> Any:
        raise NotImplementedError

    # capabilities
    def get_capabilities(
        self, *, timeout: float | None = None
    ) -> capabilities_pb2.GetCapabilitiesResponse:
        return self._call("GetCapabilities", capabilities_pb2.GetCapabilitiesRequest(), timeout)

    # thread memory mode
    def read_thread_memory_mode(
        self, *, thread_id: str, timeout: float | None = None
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        return self._call(
            "ReadThreadMemoryMode",
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id),
            timeout,
        )

    def set_thread_memory_mode(
        self,
        *,
        thread_id: str,
        mode: str | int,
        expected_revision: int,
        timeout: float | None = None,
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
        return self._call(
            "SetThreadMemoryMode",
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id,
                mode=enum_value(common_pb2.MemoryMode, "MEMORY_MODE_", mode),
                expected_revision=expected_revision,
            ),
            timeout,
        )

    # memories and sources
    def insert_memory(
        self,
        *,
        content: str = "",
        messages: Sequence[Mapping[str, str]] = (),
        thread_id: str = "",
        source_kind: str | int | None = None,
        save_intent: str = "",
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        labels: Mapping[str, str] | None = None,
        request_id: str = "",
        validate_only: bool = False,
        observed_at: Moment = None,
        timeout: float | None = None,
    ) -> sources_pb2.InsertMemoryResponse:
        """Give a `request_id` to make the insert safe to retry (it is retried on UNAVAILABLE);
        `observed_at` when the content was said or true (default: now)."""
        return self._call(
            "InsertMemory",
            sources_pb2.InsertMemoryRequest(
                content=content,
                messages=[sources_pb2.Message(**m) for m in messages],
                thread_id=thread_id,
                source_kind=enum_value(sources_pb2.SourceKind, "SOURCE_KIND_", source_kind),
                metadata=sources_pb2.InsertMetadata(
                    save_intent=save_intent,
                    save_intent_source=save_intent_source,
                    save_intent_evidence=save_intent_evidence,
                    labels=dict(labels or {}),
                ),
                request_id=request_id,
                validate_only=validate_only,
                observed_at=timestamp_of(observed_at),
            ),
            timeout,
        )

    def list_sources(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        classification: str | int | None = None,
        status: str | int | None = None,
        source_kind: str | int | None = None,
        thread_id: str = "",
        effective_state: str | int | None = None,
        timeout: float | None = None,
    ) -> sources_pb2.ListSourcesResponse:
        return self._call(
            "ListSources",
            sources_pb2.ListSourcesRequest(
                page_size=page_size,
                page_token=page_token,
                filter=sources_pb2.SourceFilter(
                    classification=enum_value(
                        sources_pb2.Classification, "CLASSIFICATION_", classification
                    ),
                    status=enum_value(sources_pb2.Status, "STATUS_", status),
                    source_kind=enum_value(sources_pb2.SourceKind, "SOURCE_KIND_", source_kind),
                    thread_id=thread_id,
                    effective_state=enum_value(
                        sources_pb2.EffectiveRetrievalState,
                        "EFFECTIVE_RETRIEVAL_STATE_",
                        effective_state,
                    ),
                ),
            ),
            timeout,
        )

    def get_source(
        self, *, source_id: str, include_content: bool = False, timeout: float | None = None
    ) -> sources_pb2.Source:
        return self._call(
            "GetSource",
            sources_pb2.GetSourceRequest(source_id=source_id, include_content=include_content),
            timeout,
        )

    def set_source_classification(
        self,
        *,
        source_id: str,
        classification: str | int,
        expected_revision: int,
        timeout: float | None = None,
    ) -> sources_pb2.SetSourceClassificationResponse:
        return self._call(
            "SetSourceClassification",
            sources_pb2.SetSourceClassificationRequest(
                source_id=source_id,
                classification=enum_value(
                    sources_pb2.Classification, "CLASSIFICATION_", classification
                ),
                expected_revision=expected_revision,
            ),
            timeout,
        )

    # retrieval
    def search_memories(
        self, *, query: str, thread_id: str = "", limit: int = 10, timeout: float | None = None
    ) -> retrieval_pb2.SearchMemoriesResponse:
        return self._call(
            "SearchMemories",
            retrieval_pb2.SearchMemoriesRequest(query=query, thread_id=thread_id, limit=limit),
            timeout,
        )

    def assemble_prompt(
        self,
        *,
        query: str,
        thread_id: str = "",
        token_budget: int = 500,
        timeout: float | None = None,
    ) -> retrieval_pb2.AssemblePromptResponse:
        return self._call(
            "AssemblePrompt",
            retrieval_pb2.AssemblePromptRequest(
                query=query, thread_id=thread_id, token_budget=token_budget
            ),
            timeout,
        )

    def explain_retrieval(
        self, *, query: str, thread_id: str = "", limit: int = 10, timeout: float | None = None
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        return self._call(
            "ExplainRetrieval",
            retrieval_pb2.ExplainRetrievalRequest(query=query, thread_id=thread_id, limit=limit),
            timeout,
        )

    # review
    def list_memories(
        self,
        *,
        status_filter: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> review_pb2.ListMemoriesResponse:
        return self._call(
            "ListMemories",
            review_pb2.ListMemoriesRequest(
                status_filter=enum_value(
                    review_pb2.MemoryStatusFilter, "MEMORY_STATUS_FILTER_", status_filter
                ),
                page_size=page_size,
                page_token=page_token,
            ),
            timeout,
        )

    def review_memory(
        self,
        *,
        source_id: str,
        decision: str | int,
        expected_revision: int,
        note: str = "",
        timeout: float | None = None,
    ) -> review_pb2.ReviewMemoryResponse:
        return self._call(
            "ReviewMemory",
            review_pb2.ReviewMemoryRequest(
                source_id=source_id,
                decision=enum_value(review_pb2.Decision, "DECISION_", decision),
                expected_revision=expected_revision,
                note=note,
            ),
            timeout,
        )

    def get_insert_policy(self, *, timeout: float | None = None) -> Any:
        return self._call("GetInsertPolicy", review_pb2.GetInsertPolicyRequest(), timeout)

    def set_insert_policy(
        self, *, insert_policy: str | int, expected_revision: int, timeout: float | None = None
    ) -> Any:
        return self._call(
            "SetInsertPolicy",
            review_pb2.SetInsertPolicyRequest(
                insert_policy=enum_value(common_pb2.InsertPolicy, "INSERT_POLICY_", insert_policy),
                expected_revision=expected_revision,
            ),
            timeout,
        )

    # facts
    def search_facts(
        self,
        *,
        query: str = "",
        save_intent: str = "",
        save_intent_source: str = "",
        status: str | int | None = None,
        limit: int = 0,
        as_of: Moment = None,
        include_superseded: bool = False,
        timeout: float | None = None,
    ) -> facts_pb2.SearchFactsResponse:
        """The current facts; `as_of` those current then; `include_superseded` the history."""
        return self._call(
            "SearchFacts",
            facts_pb2.SearchFactsRequest(
                query=query,
                save_intent=save_intent,
                save_intent_source=save_intent_source,
                status=enum_value(facts_pb2.FactStatus, "FACT_STATUS_", status),
                limit=limit,
                as_of=timestamp_of(as_of),
                include_superseded=include_superseded,
            ),
            timeout,
        )

    def get_profile(
        self, *, save_intent_source: str = "", as_of: Moment = None, timeout: float | None = None
    ) -> facts_pb2.GetProfileResponse:
        return self._call(
            "GetProfile",
            facts_pb2.GetProfileRequest(
                save_intent_source=save_intent_source, as_of=timestamp_of(as_of)
            ),
            timeout,
        )

    def ask(
        self,
        *,
        question: str,
        token_budget: int = 300,
        as_of: Moment = None,
        timeout: float | None = None,
    ) -> facts_pb2.AskResponse:
        return self._call(
            "Ask",
            facts_pb2.AskRequest(
                question=question, token_budget=token_budget, as_of=timestamp_of(as_of)
            ),
            timeout,
        )

    def retract_fact(
        self, *, fact_id: str, reason: str = "", timeout: float | None = None
    ) -> facts_pb2.RetractFactResponse:
        """The user says the fact is wrong: it leaves every read, the value before it is
        current again, its memory stays (needs memory.review and a user principal)."""
        return self._call(
            "RetractFact", facts_pb2.RetractFactRequest(fact_id=fact_id, reason=reason), timeout
        )

    # foreign sources, revocation, erasure
    def register_owner_key(
        self, *, owner_id: str, key_id: str, public_key_pem: str, timeout: float | None = None
    ) -> foreign_pb2.RegisterOwnerKeyResponse:
        return self._call(
            "RegisterOwnerKey",
            foreign_pb2.RegisterOwnerKeyRequest(
                owner_id=owner_id, key_id=key_id, public_key_pem=public_key_pem
            ),
            timeout,
        )

    def revoke_owner_key(
        self, *, owner_id: str, key_id: str, timeout: float | None = None
    ) -> foreign_pb2.RevokeOwnerKeyResponse:
        return self._call(
            "RevokeOwnerKey",
            foreign_pb2.RevokeOwnerKeyRequest(owner_id=owner_id, key_id=key_id),
            timeout,
        )

    def prepare_foreign_source(
        self,
        *,
        canonical_owner: str,
        pointer: foreign_pb2.ThinPointer | Mapping[str, str],
        timeout: float | None = None,
    ) -> foreign_pb2.PrepareForeignSourceResponse:
        return self._call(
            "PrepareForeignSource",
            foreign_pb2.PrepareForeignSourceRequest(
                canonical_owner=canonical_owner, pointer=_pointer(pointer)
            ),
            timeout,
        )

    def admit_foreign_source(
        self,
        *,
        canonical_owner: str,
        pointer: foreign_pb2.ThinPointer | Mapping[str, str],
        assent: str,
        timeout: float | None = None,
    ) -> foreign_pb2.AdmitForeignSourceResponse:
        return self._call(
            "AdmitForeignSource",
            foreign_pb2.AdmitForeignSourceRequest(
                canonical_owner=canonical_owner, pointer=_pointer(pointer), assent=assent
            ),
            timeout,
        )

    def revoke_source(
        self, *, source_id: str, reason: str = "", timeout: float | None = None
    ) -> foreign_pb2.RevokeSourceResponse:
        return self._call(
            "RevokeSource",
            foreign_pb2.RevokeSourceRequest(source_id=source_id, reason=reason),
            timeout,
        )

    def revoke_assent(
        self,
        *,
        source_id: str,
        assent_id: str,
        revocation: str = "",
        timeout: float | None = None,
    ) -> foreign_pb2.RevokeAssentResponse:
        return self._call(
            "RevokeAssent",
            foreign_pb2.RevokeAssentRequest(
                source_id=source_id, assent_id=assent_id, revocation=revocation
            ),
            timeout,
        )

    def readback_source(
        self, *, source_id: str, timeout: float | None = None
    ) -> foreign_pb2.ReadbackSourceResponse:
        return self._call(
            "ReadbackSource", foreign_pb2.ReadbackSourceRequest(source_id=source_id), timeout
        )

    def erase_source(
        self,
        *,
        source_id: str,
        expected_revision: int,
        reason: str = "",
        timeout: float | None = None,
    ) -> foreign_pb2.EraseSourceResponse:
        return self._call(
            "EraseSource",
            foreign_pb2.EraseSourceRequest(
                source_id=source_id, expected_revision=expected_revision, reason=reason
            ),
            timeout,
        )

    # audit
    def list_audit_receipts(
        self,
        *,
        target_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> audit_pb2.ListAuditReceiptsResponse:
        return self._call(
            "ListAuditReceipts",
            audit_pb2.ListAuditReceiptsRequest(
                target_id=target_id, page_size=page_size, page_token=page_token
            ),
            timeout,
        )

    def verify_audit_chain(
        self, *, timeout: float | None = None
    ) -> audit_pb2.VerifyAuditChainResponse:
        return self._call("VerifyAuditChain", audit_pb2.VerifyAuditChainRequest(), timeout)


def _pointer(pointer: foreign_pb2.ThinPointer | Mapping[str, str]) -> foreign_pb2.ThinPointer:
    if isinstance(pointer, foreign_pb2.ThinPointer):
        return pointer
    return foreign_pb2.ThinPointer(**pointer)


def event_kinds(kinds: Iterable[str | int]) -> list[int]:
    from agentmem.v1 import events_pb2

    return [enum_value(events_pb2.EventKind, "EVENT_KIND_", k) for k in kinds]
