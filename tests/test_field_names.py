"""Errors name the request's own fields: for every RPC, each validated field given a bad
value comes back as INVALID_ARGUMENT whose BadRequest violation names that field as the
request spells it (`Ask` says `question`, a fact search `save_intent`, an insert
`metadata.save_intent`)."""

from __future__ import annotations

import grpc
from google.protobuf import descriptor as d
from google.rpc import error_details_pb2

from agentmem.contract.grpc_errors import status_of_call
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
from protocol_svc.policy import SERVICE
from tests.memory_helpers import insert

LONG = "x" * 2001
ID = "t\u200b1"  # a zero-width space: refused in every id

# (RPC, request, the field its violation must name)
CASES = [
    (
        "AppendMessages",
        sources_pb2.AppendMessagesRequest(
            source_id=ID, messages=[sources_pb2.Message(role="user", content="x")]
        ),
        "source_id",
    ),
    ("ReadThreadMemoryMode", thread_mode_pb2.ReadThreadMemoryModeRequest(), "thread_id"),
    (
        "SetThreadMemoryMode",
        thread_mode_pb2.SetThreadMemoryModeRequest(thread_id="t", mode=99),
        "mode",
    ),
    (
        "SetThreadMemoryMode",
        thread_mode_pb2.SetThreadMemoryModeRequest(
            thread_id="t", mode=common_pb2.MEMORY_MODE_DISABLED, expected_revision=-1
        ),
        "expected_revision",
    ),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="x", thread_id=ID), "thread_id"),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="x", request_id=ID), "request_id"),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(), "content"),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="x" * 1_000_001), "content"),
    (
        "InsertMemory",
        sources_pb2.InsertMemoryRequest(messages=[sources_pb2.Message(role="x", content="y")]),
        "messages[0].role",
    ),
    (
        "InsertMemory",
        sources_pb2.InsertMemoryRequest(
            content="x", metadata=sources_pb2.InsertMetadata(save_intent="bogus")
        ),
        "metadata.save_intent",
    ),
    (
        "InsertMemory",
        sources_pb2.InsertMemoryRequest(
            content="x", metadata=sources_pb2.InsertMetadata(labels={ID: "v"})
        ),
        "metadata.labels",
    ),
    ("InsertMemory", sources_pb2.InsertMemoryRequest(content="x", source_kind=99), "source_kind"),
    (
        "ListSources",
        sources_pb2.ListSourcesRequest(filter=sources_pb2.SourceFilter(thread_id=ID)),
        "filter.thread_id",
    ),
    ("ListSources", sources_pb2.ListSourcesRequest(page_size=-1), "page_size"),
    ("GetSource", sources_pb2.GetSourceRequest(source_id=ID), "source_id"),
    (
        "SetSourceClassification",
        sources_pb2.SetSourceClassificationRequest(source_id="s", classification=99),
        "classification",
    ),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query=LONG, limit=5), "query"),
    ("SearchMemories", retrieval_pb2.SearchMemoriesRequest(query="q", limit=0), "limit"),
    (
        "AssemblePrompt",
        retrieval_pb2.AssemblePromptRequest(query="q", thread_id="t", token_budget=0),
        "token_budget",
    ),
    ("ExplainRetrieval", retrieval_pb2.ExplainRetrievalRequest(query="", limit=5), "query"),
    ("ListMemories", review_pb2.ListMemoriesRequest(status_filter=99), "status_filter"),
    (
        "ReviewMemory",
        review_pb2.ReviewMemoryRequest(source_id="s", decision=99),
        "decision",
    ),
    (
        "ReviewMemory",
        review_pb2.ReviewMemoryRequest(source_id="s", decision=1, note="n" * 201),
        "note",
    ),
    ("SetInsertPolicy", review_pb2.SetInsertPolicyRequest(insert_policy=99), "insert_policy"),
    ("SearchFacts", facts_pb2.SearchFactsRequest(query=LONG), "query"),
    ("SearchFacts", facts_pb2.SearchFactsRequest(save_intent="bogus"), "save_intent"),
    (
        "SearchFacts",
        facts_pb2.SearchFactsRequest(save_intent_source="s" * 500),
        "save_intent_source",
    ),
    ("GetProfile", facts_pb2.GetProfileRequest(save_intent_source="s" * 500), "save_intent_source"),
    ("RetractFact", facts_pb2.RetractFactRequest(), "fact_id"),
    ("RetractFact", facts_pb2.RetractFactRequest(fact_id="f", reason="r" * 201), "reason"),
    ("Ask", facts_pb2.AskRequest(question=LONG, token_budget=100), "question"),
    ("Ask", facts_pb2.AskRequest(question="", token_budget=100), "question"),
    ("Ask", facts_pb2.AskRequest(question="q", token_budget=0), "token_budget"),
    ("RegisterOwnerKey", foreign_pb2.RegisterOwnerKeyRequest(key_id="k"), "owner_id"),
    (
        "RegisterOwnerKey",
        foreign_pb2.RegisterOwnerKeyRequest(owner_id="o", key_id="k", public_key_pem="nope"),
        "public_key_pem",
    ),
    ("RevokeOwnerKey", foreign_pb2.RevokeOwnerKeyRequest(owner_id="o", key_id=ID), "key_id"),
    ("PrepareForeignSource", foreign_pb2.PrepareForeignSourceRequest(), "canonical_owner"),
    (
        "PrepareForeignSource",
        foreign_pb2.PrepareForeignSourceRequest(
            canonical_owner="o", pointer=foreign_pb2.ThinPointer(uri="not a uri")
        ),
        "pointer.uri",
    ),
    ("AdmitForeignSource", foreign_pb2.AdmitForeignSourceRequest(), "canonical_owner"),
    ("RevokeSource", foreign_pb2.RevokeSourceRequest(source_id=ID), "source_id"),
    (
        "RevokeSource",
        foreign_pb2.RevokeSourceRequest(source_id="s", reason="r" * 201),
        "reason",
    ),
    ("RevokeAssent", foreign_pb2.RevokeAssentRequest(source_id=""), "source_id"),
    ("ReadbackSource", foreign_pb2.ReadbackSourceRequest(source_id=""), "source_id"),
    (
        "EraseSource",
        foreign_pb2.EraseSourceRequest(source_id="s", expected_revision=-1),
        "expected_revision",
    ),
    ("ListAuditReceipts", audit_pb2.ListAuditReceiptsRequest(target_id=ID), "target_id"),
    ("WatchEvents", events_pb2.WatchEventsRequest(after_sequence=-1), "after_sequence"),
    ("WatchEvents", events_pb2.WatchEventsRequest(kinds=[99]), "kinds"),
]
# Requests with no field to get wrong.
NO_FIELDS = {"GetCapabilities", "GetInsertPolicy", "VerifyAuditChain"}


def resolves(message: d.Descriptor, path: str) -> bool:
    """Whether `path` (`a.b`, `a[0].b`, a map field) names a field of `message`."""
    for part in path.split("."):
        field = message.fields_by_name.get(part.split("[", 1)[0]) if message else None
        if field is None:
            return False
        message = field.message_type
        if message is not None and message.GetOptions().map_entry:
            message = None  # a map's keys and values are not fields
    return True


def violations(err: grpc.RpcError) -> list[str]:
    status = status_of_call(err)
    out = []
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            out += [v.field for v in bad.field_violations]
    return out


def test_the_table_covers_every_rpc_with_fields():
    assert {name for name, _, _ in CASES} | NO_FIELDS == {m.name for m in SERVICE.methods}
    for name, request, field in CASES:
        assert resolves(request.DESCRIPTOR, field), (name, field)


def test_an_invalid_field_is_named_as_the_request_names_it(stack):
    client = stack.client()
    review_target = insert(client, "a memory to review").source_id
    wrong = []
    for rpc, request, field in CASES:
        if rpc == "ReviewMemory":  # a real source, so the request reaches its checks
            request.source_id = review_target
        call = getattr(client, rpc)
        try:
            if SERVICE.methods_by_name[rpc].server_streaming:
                next(iter(call(request, timeout=10)))
            else:
                call(request, timeout=10)
            wrong.append(f"{rpc}: accepted a bad {field}")
        except grpc.RpcError as e:
            named = violations(e)[:1]
            if e.code() != grpc.StatusCode.INVALID_ARGUMENT or named != [field]:
                wrong.append(f"{rpc}: {e.code().name} {named} for {field}: {e.details()}")
    assert not wrong, "\n".join(wrong)
