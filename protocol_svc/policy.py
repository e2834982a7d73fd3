"""Deny by default: every public RPC has exactly one entry here, keyed by full method name.

An entry names the scope the caller needs, the capability that must be enabled, and
whether the call is idempotent (only those are retried on UNAVAILABLE). A method with no
entry is refused; a test built from the service descriptor fails if one is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.v1 import memory_service_pb2

SERVICE = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"]


@dataclass(frozen=True)
class Rule:
    scope: str
    capability: str | None
    idempotent: bool


def _m(name: str) -> str:
    return f"/{SERVICE.full_name}/{name}"


POLICY: dict[str, Rule] = {
    _m("GetCapabilities"): Rule("memory.read", None, idempotent=True),
    _m("ReadThreadMemoryMode"): Rule("memory.read", "thread_memory_mode", idempotent=True),
    _m("SetThreadMemoryMode"): Rule("memory.policy", "thread_memory_mode", idempotent=False),
    # Inserts are retried only when they carry a request_id (the runtime deduplicates).
    _m("InsertMemory"): Rule("memory.write", None, idempotent=False),
    _m("ListSources"): Rule("memory.read", "source_policy", idempotent=True),
    _m("GetSource"): Rule("memory.read", "source_policy", idempotent=True),
    _m("SetSourceClassification"): Rule("memory.policy", "source_policy", idempotent=False),
    # A retry after a commit would meet the new revision (REVISION_MISMATCH): not retried.
    _m("AppendMessages"): Rule("memory.write", None, idempotent=False),
    _m("SearchMemories"): Rule("memory.read", None, idempotent=True),
    # Stores a prompt record, but a retry only stores another record: safe to repeat.
    _m("AssemblePrompt"): Rule("memory.read", None, idempotent=True),
    _m("ExplainRetrieval"): Rule("memory.read", "retrieval_explain", idempotent=True),
    _m("ListMemories"): Rule("memory.read", "save_intent", idempotent=True),
    _m("ReviewMemory"): Rule("memory.review", "save_intent", idempotent=False),
    _m("GetInsertPolicy"): Rule("memory.admin", "save_intent", idempotent=True),
    _m("SetInsertPolicy"): Rule("memory.admin", "save_intent", idempotent=False),
    _m("SearchFacts"): Rule("memory.read", "facts", idempotent=True),
    _m("GetProfile"): Rule("memory.read", "facts", idempotent=True),
    _m("Ask"): Rule("memory.read", "facts", idempotent=True),
    _m("RetractFact"): Rule("memory.review", "facts", idempotent=False),
    _m("RegisterOwnerKey"): Rule("memory.admin", "foreign_sources", idempotent=False),
    _m("RevokeOwnerKey"): Rule("memory.admin", "foreign_sources", idempotent=False),
    _m("PrepareForeignSource"): Rule("memory.admit", "foreign_sources", idempotent=True),
    _m("AdmitForeignSource"): Rule("memory.admit", "foreign_sources", idempotent=False),
    _m("RevokeSource"): Rule("memory.policy", "source_policy", idempotent=False),
    _m("RevokeAssent"): Rule("memory.admit", "foreign_sources", idempotent=False),
    _m("ReadbackSource"): Rule("memory.read", "source_policy", idempotent=True),
    _m("EraseSource"): Rule("memory.policy", "source_policy", idempotent=False),
    _m("ListAuditReceipts"): Rule("memory.admin", None, idempotent=True),
    _m("VerifyAuditChain"): Rule("memory.admin", None, idempotent=True),
    _m("WatchEvents"): Rule("memory.read", "events", idempotent=True),
}


def rule_for(method: str) -> Rule | None:
    return POLICY.get(method)


def method_name(full_method: str) -> str:
    return full_method.rsplit("/", 1)[-1]
