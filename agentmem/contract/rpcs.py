"""One table of every public RPC: the scope a caller needs, the capability that must be on,
whether a call is safe to repeat, the kinds of event it makes. Every per-RPC fact is read
from here: the gateway's deny-by-default policy, the clients' retries, the app-server's
gating and notification names, the MCP tools' annotations. A test built from the service
descriptor fails when an RPC has no row.

Adding an RPC: its row here, then the proto, the runtime handler and the surfaces that
expose it (docs/development.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentmem.contract.capabilities import DEFAULTS, CapabilityState
from agentmem.contract.scopes import Scope
from agentmem.v1 import memory_service_pb2

SERVICE = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"]


@dataclass(frozen=True)
class Event:
    """A kind of event an RPC makes: the `Event` payload field, and the name a host's
    JSON-RPC wire gives its notification."""

    field: str
    notification: str


@dataclass(frozen=True)
class Rpc:
    name: str
    scope: Scope
    capability: str | None
    # Safe to repeat: only these are retried on UNAVAILABLE (InsertMemory joins them when it
    # carries a request_id: the runtime deduplicates).
    idempotent: bool
    events: tuple[Event, ...] = ()

    @property
    def method(self) -> str:
        """The full gRPC method name, as interceptors see it."""
        return f"/{SERVICE.full_name}/{self.name}"

    @property
    def experimental(self) -> bool:
        """Whether its capability is experimental unless a server's configuration says
        otherwise (a caller then opts in by name)."""
        return self.capability is not None and (
            DEFAULTS[self.capability] is CapabilityState.EXPERIMENTAL
        )

    @property
    def read_only(self) -> bool:
        """Changes nothing a caller could see again (AssemblePrompt stores a prompt record,
        which a retry only repeats)."""
        return self.scope is Scope.READ


R, W, P = Scope.READ, Scope.WRITE, Scope.POLICY
REVIEW, ADMIT, ADMIN = Scope.REVIEW, Scope.ADMIT, Scope.ADMIN
SOURCES, INTENT, FACTS, FOREIGN = "source_policy", "save_intent", "facts", "foreign_sources"

# Calls the runtime answers with their first result when sent again with the same
# `request_id`: with one, they are retried like idempotent calls (gateway and clients).
KEYED = frozenset({"InsertMemory", "AppendMessages"})

TABLE: tuple[Rpc, ...] = (
    Rpc("GetCapabilities", R, None, idempotent=True),
    Rpc("ReadThreadMemoryMode", R, "thread_memory_mode", idempotent=True),
    Rpc(
        "SetThreadMemoryMode",
        P,
        "thread_memory_mode",
        idempotent=False,
        events=(Event("thread_memory_mode_updated", "thread/memoryMode/updated"),),
    ),
    Rpc(
        "InsertMemory",
        W,
        None,
        idempotent=False,
        events=(Event("memory_inserted", "memory/inserted"),),
    ),
    Rpc("ListSources", R, SOURCES, idempotent=True),
    Rpc("GetSource", R, SOURCES, idempotent=True),
    Rpc(
        "SetSourceClassification",
        P,
        SOURCES,
        idempotent=False,
        events=(Event("source_classification_updated", "memory/sources/classification/updated"),),
    ),
    # A retry after a commit would meet the new revision (REVISION_MISMATCH): retried
    # only with a request id (`KEYED`).
    Rpc(
        "AppendMessages",
        W,
        None,
        idempotent=False,
        events=(Event("messages_appended", "memory/sources/appended"),),
    ),
    Rpc("SearchMemories", R, None, idempotent=True),
    # Stores a prompt record, but a retry only stores another record: safe to repeat.
    Rpc("AssemblePrompt", R, None, idempotent=True),
    Rpc("ExplainRetrieval", R, "retrieval_explain", idempotent=True),
    Rpc("ListMemories", R, INTENT, idempotent=True),
    Rpc(
        "ReviewMemory",
        REVIEW,
        INTENT,
        idempotent=False,
        events=(Event("memory_reviewed", "memory/reviewed"),),
    ),
    Rpc("GetInsertPolicy", ADMIN, INTENT, idempotent=True),
    Rpc(
        "SetInsertPolicy",
        ADMIN,
        INTENT,
        idempotent=False,
        events=(Event("insert_policy_updated", "memory/insertPolicy/updated"),),
    ),
    Rpc("SearchFacts", R, FACTS, idempotent=True),
    Rpc("GetProfile", R, FACTS, idempotent=True),
    Rpc("Ask", R, FACTS, idempotent=True),
    Rpc(
        "RetractFact",
        REVIEW,
        FACTS,
        idempotent=False,
        events=(Event("fact_retracted", "memory/facts/retracted"),),
    ),
    Rpc(
        "RegisterOwnerKey",
        ADMIN,
        FOREIGN,
        idempotent=False,
        events=(Event("owner_key_registered", "memory/ownerKeys/registered"),),
    ),
    Rpc(
        "RevokeOwnerKey",
        ADMIN,
        FOREIGN,
        idempotent=False,
        events=(Event("owner_key_revoked", "memory/ownerKeys/revoked"),),
    ),
    Rpc("PrepareForeignSource", ADMIT, FOREIGN, idempotent=True),
    Rpc(
        "AdmitForeignSource",
        ADMIT,
        FOREIGN,
        idempotent=False,
        events=(
            Event("foreign_source_admitted", "memory/foreign/admitted"),
            Event("foreign_source_denied", "memory/foreign/denied"),
        ),
    ),
    Rpc(
        "RevokeSource",
        P,
        SOURCES,
        idempotent=False,
        events=(Event("source_revoked", "memory/sources/revoked"),),
    ),
    Rpc(
        "RevokeAssent",
        ADMIT,
        FOREIGN,
        idempotent=False,
        events=(Event("assent_revoked", "memory/sources/assent/revoked"),),
    ),
    Rpc("ReadbackSource", R, SOURCES, idempotent=True),
    Rpc(
        "EraseSource",
        P,
        SOURCES,
        idempotent=False,
        events=(
            Event("source_erased", "memory/sources/erased"),
            Event("source_erasure_finished", "memory/sources/erasure/finished"),
            Event("turns_erased", "memory/sources/turns/erased"),
        ),
    ),
    Rpc("ListAuditReceipts", ADMIN, None, idempotent=True),
    Rpc("VerifyAuditChain", ADMIN, None, idempotent=True),
    Rpc("WatchEvents", R, "events", idempotent=True),
)

BY_NAME: Mapping[str, Rpc] = {rpc.name: rpc for rpc in TABLE}
BY_METHOD: Mapping[str, Rpc] = {rpc.method: rpc for rpc in TABLE}
# The calls that are safe to repeat.
IDEMPOTENT = frozenset(rpc.name for rpc in TABLE if rpc.idempotent)


def missing_rows() -> list[str]:
    """RPCs of the service without a row (the table's test fails on any)."""
    return [m.name for m in SERVICE.methods if m.name not in BY_NAME]
