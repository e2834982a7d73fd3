"""Request-shape checks, run after authorization and before the runtime is called.

The runtime checks domain rules (text lengths, labels, save intent) itself, so that every
surface gets the same rules; here the gateway refuses malformed requests early.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf.message import Message

from agentmem.contract import validation as v
from agentmem.contract.errors import invalid_field
from agentmem.v1 import (
    audit_pb2,
    common_pb2,
    events_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from agentmem_kernel import paging

MAX_PAGE_TOKEN = 512


def _values(enum: Any) -> tuple[int, ...]:
    return tuple(value for name, value in enum.items() if not name.endswith("_UNSPECIFIED"))


MODES = _values(common_pb2.MemoryMode)
EVENT_KINDS = _values(events_pb2.EventKind)
KINDS = _values(sources_pb2.SourceKind)
CLASSIFICATIONS = _values(sources_pb2.Classification)
STATUSES = _values(sources_pb2.Status)
STATES = _values(sources_pb2.EffectiveRetrievalState)
MEMORY_FILTERS = _values(review_pb2.MemoryStatusFilter)
DECISIONS = _values(review_pb2.Decision)
POLICIES = _values(common_pb2.InsertPolicy)
FACT_STATES = _values(facts_pb2.FactStatus)


def _optional_enum(name: str, value: int, allowed: tuple[int, ...]) -> None:
    if value:
        v.enum_value(name, value, allowed)


def _page(
    r: (
        sources_pb2.ListSourcesRequest
        | review_pb2.ListMemoriesRequest
        | audit_pb2.ListAuditReceiptsRequest
    ),
) -> None:
    v.page_size(r.page_size)
    if len(r.page_token) > MAX_PAGE_TOKEN:
        raise paging.invalid_page_token()


def _thread_mode_read(r: thread_mode_pb2.ReadThreadMemoryModeRequest) -> None:
    v.identifier("thread_id", r.thread_id)


def _thread_mode_set(r: thread_mode_pb2.SetThreadMemoryModeRequest) -> None:
    v.identifier("thread_id", r.thread_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.enum_value("mode", r.mode, MODES)
    v.identifier("request_id", r.request_id, required=False)


def _optional_time(name: str, r: Message) -> None:
    """The request's Timestamp field `name`, when it is set."""
    if r.HasField(name):
        v.timestamp(name, getattr(r, name))


def _sent_at(messages: Iterable[sources_pb2.Message]) -> None:
    for i, m in enumerate(messages):
        if m.HasField("sent_at"):
            v.timestamp(f"messages[{i}].sent_at", m.sent_at)


def _insert(r: sources_pb2.InsertMemoryRequest) -> None:
    v.identifier("thread_id", r.thread_id, required=False)
    v.identifier("request_id", r.request_id, required=False)
    if bool(r.content) == bool(r.messages):
        raise invalid_field("content", "give exactly one of content and messages")
    _optional_enum("source_kind", r.source_kind, KINDS)
    _optional_time("observed_at", r)
    _sent_at(r.messages)


def _list_sources(r: sources_pb2.ListSourcesRequest) -> None:
    _page(r)
    f = r.filter
    _optional_enum("filter.classification", f.classification, CLASSIFICATIONS)
    _optional_enum("filter.status", f.status, STATUSES)
    _optional_enum("filter.effective_state", f.effective_state, STATES)
    _optional_enum("filter.source_kind", f.source_kind, KINDS)
    v.identifier("filter.thread_id", f.thread_id, required=False)


def _get_source(r: sources_pb2.GetSourceRequest) -> None:
    v.identifier("source_id", r.source_id)


def _classify(r: sources_pb2.SetSourceClassificationRequest) -> None:
    v.identifier("source_id", r.source_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.enum_value("classification", r.classification, CLASSIFICATIONS)
    v.identifier("request_id", r.request_id, required=False)


def _search(r: retrieval_pb2.SearchMemoriesRequest | retrieval_pb2.ExplainRetrievalRequest) -> None:
    v.query(r.query)
    v.identifier("thread_id", r.thread_id, required=False)
    v.in_range("limit", r.limit, 1, v.MAX_LIMIT)


def _explain(r: retrieval_pb2.ExplainRetrievalRequest) -> None:
    _search(r)
    v.in_range("token_budget", r.token_budget, 0, v.MAX_TOKEN_BUDGET)


def _assemble(r: retrieval_pb2.AssemblePromptRequest) -> None:
    v.query(r.query)
    v.identifier("thread_id", r.thread_id, required=False)
    v.in_range("token_budget", r.token_budget, 1, v.MAX_TOKEN_BUDGET)


def _list_memories(r: review_pb2.ListMemoriesRequest) -> None:
    _optional_enum("status_filter", r.status_filter, MEMORY_FILTERS)
    _page(r)


def _review(r: review_pb2.ReviewMemoryRequest) -> None:
    v.identifier("source_id", r.source_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.enum_value("decision", r.decision, DECISIONS)
    v.identifier("request_id", r.request_id, required=False)
    if len(r.note) > 200:
        raise invalid_field("note", "must be at most 200 characters")


def _set_policy(r: review_pb2.SetInsertPolicyRequest) -> None:
    v.non_negative("expected_revision", r.expected_revision)
    v.enum_value("insert_policy", r.insert_policy, POLICIES)
    v.identifier("request_id", r.request_id, required=False)


def _search_facts(r: facts_pb2.SearchFactsRequest) -> None:
    if r.query:
        v.query(r.query)
    _optional_enum("status", r.status, FACT_STATES)
    v.in_range("limit", r.limit, 0, v.MAX_LIMIT)
    _optional_time("as_of", r)


def _profile(r: facts_pb2.GetProfileRequest) -> None:
    _optional_time("as_of", r)


def _ask(r: facts_pb2.AskRequest) -> None:
    v.query(r.question, "question")
    v.in_range("token_budget", r.token_budget, 1, v.MAX_TOKEN_BUDGET)
    _optional_time("as_of", r)


def _retract_fact(r: facts_pb2.RetractFactRequest) -> None:
    v.identifier("fact_id", r.fact_id)
    if len(r.reason) > 200:
        raise invalid_field("reason", "must be at most 200 characters")


def _owner_key(r: foreign_pb2.RegisterOwnerKeyRequest | foreign_pb2.RevokeOwnerKeyRequest) -> None:
    v.identifier("owner_id", r.owner_id)
    v.identifier("key_id", r.key_id)


def _foreign(
    r: foreign_pb2.PrepareForeignSourceRequest | foreign_pb2.AdmitForeignSourceRequest,
) -> None:
    v.identifier("canonical_owner", r.canonical_owner)


def _source(
    r: (
        foreign_pb2.RevokeSourceRequest
        | foreign_pb2.RevokeAssentRequest
        | foreign_pb2.ReadbackSourceRequest
    ),
) -> None:
    v.identifier("source_id", r.source_id)


def _append(r: sources_pb2.AppendMessagesRequest) -> None:
    v.identifier("source_id", r.source_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.identifier("request_id", r.request_id, required=False)
    if not r.messages:
        raise invalid_field("messages", "give at least one message")
    _sent_at(r.messages)


def _erase(r: foreign_pb2.EraseSourceRequest) -> None:
    v.identifier("source_id", r.source_id)
    v.non_negative("expected_revision", r.expected_revision)
    v.identifier("appended_by", r.appended_by, required=False)


def _audit_list(r: audit_pb2.ListAuditReceiptsRequest) -> None:
    v.identifier("target_id", r.target_id, required=False)
    _page(r)


def _watch(r: events_pb2.WatchEventsRequest) -> None:
    v.non_negative("after_sequence", r.after_sequence)
    for kind in r.kinds:
        v.enum_value("kinds", kind, EVENT_KINDS)


# Each request type's checks (a validator takes its request message). A request with no
# fields has nothing to check.
VALIDATORS: dict[type[Message], Callable[[Any], None]] = {
    thread_mode_pb2.ReadThreadMemoryModeRequest: _thread_mode_read,
    thread_mode_pb2.SetThreadMemoryModeRequest: _thread_mode_set,
    sources_pb2.InsertMemoryRequest: _insert,
    sources_pb2.ListSourcesRequest: _list_sources,
    sources_pb2.GetSourceRequest: _get_source,
    sources_pb2.SetSourceClassificationRequest: _classify,
    sources_pb2.AppendMessagesRequest: _append,
    retrieval_pb2.SearchMemoriesRequest: _search,
    retrieval_pb2.AssemblePromptRequest: _assemble,
    retrieval_pb2.ExplainRetrievalRequest: _explain,
    review_pb2.ListMemoriesRequest: _list_memories,
    review_pb2.ReviewMemoryRequest: _review,
    review_pb2.SetInsertPolicyRequest: _set_policy,
    facts_pb2.SearchFactsRequest: _search_facts,
    facts_pb2.GetProfileRequest: _profile,
    facts_pb2.AskRequest: _ask,
    facts_pb2.RetractFactRequest: _retract_fact,
    foreign_pb2.RegisterOwnerKeyRequest: _owner_key,
    foreign_pb2.RevokeOwnerKeyRequest: _owner_key,
    foreign_pb2.PrepareForeignSourceRequest: _foreign,
    foreign_pb2.AdmitForeignSourceRequest: _foreign,
    foreign_pb2.RevokeSourceRequest: _source,
    foreign_pb2.RevokeAssentRequest: _source,
    foreign_pb2.ReadbackSourceRequest: _source,
    foreign_pb2.EraseSourceRequest: _erase,
    audit_pb2.ListAuditReceiptsRequest: _audit_list,
    events_pb2.WatchEventsRequest: _watch,
}


def validate(request: Message) -> None:
    """Refuses a malformed request (INVALID_FIELD naming the field), by its type's checks."""
    check = VALIDATORS.get(type(request))
    if check is not None:
        check(request)
    elif request.DESCRIPTOR.fields:  # a request that says something must be checked
        raise TypeError(f"no validator for {request.DESCRIPTOR.full_name}")
