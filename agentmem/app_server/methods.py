"""The one definition of the bridge's methods and notifications.

Each method names the public RPC it calls; its params and result types are that RPC's
request and response messages (`models`), so the handlers' validation, the JSON Schemas
and the TypeScript types all come from this table. Which capability gates a method is the
gateway's policy table's answer for its RPC, and whether that capability is experimental
is the gateway's `GetCapabilities` answer at run time (the capability settings when
generating schemas): the bridge keeps no list of its own.

A notification is one kind of event of the gateway's `WatchEvents` stream; it is gated by
the capability of the RPC that makes such an event, and by the `events` capability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import message_factory
from google.protobuf.message import Message
from pydantic import BaseModel, Field, StrictInt

from agentmem.app_server import upstream
from agentmem.app_server.models import Registry, type_name
from agentmem.client import person_decisions as person
from agentmem.client import protojson
from agentmem.contract import rpcs
from agentmem.v1 import events_pb2, memory_service_pb2

SERVICE = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"]
EVENTS_CAPABILITY = "events"
_EVENT = protojson.descriptor_of(events_pb2.Event())


@dataclass(frozen=True)
class Spec:
    """A method as written in the table below."""

    name: str  # the host's method name, noun/verb camelCase
    rpc: str  # the public RPC it calls
    summary: str
    required: tuple[str, ...] = ()  # proto fields the params must carry
    defaults: Mapping[str, Any] = field(default_factory=dict)  # the typed client's defaults
    fixed: Mapping[str, Any] = field(default_factory=dict)  # set by the method, not the host
    # The person's decision (`agentmem.client.person_decisions`): said in its schema's description
    # and in an agent's refusal.
    decision: person.Decision | None = None

    @property
    def description(self) -> str:
        return self.summary + (self.decision.described() if self.decision else "")


@dataclass(frozen=True)
class Method:
    spec: Spec
    capability: str | None
    params: type[BaseModel]
    result: type[BaseModel]
    run: upstream.Run | None = None  # Codex's own methods: more than one call of `spec.rpc`

    @property
    def name(self) -> str:
        return self.spec.name

    def request(self, params: BaseModel) -> Message:
        """The RPC's request message from validated params."""
        descriptor = SERVICE.methods_by_name[self.spec.rpc].input_type
        values = {**params.model_dump(exclude_none=True), **self.spec.fixed}
        return protojson.fill(message_factory.GetMessageClass(descriptor)(), values)


@dataclass(frozen=True)
class Notification:
    name: str
    event: str  # the Event payload field
    rpc: str  # the RPC whose capability gates it
    params: type[BaseModel]
    capabilities: frozenset[str]

    @property
    def kind(self) -> int:
        return int(events_pb2.EventKind.Value(f"EVENT_KIND_{self.event.upper()}"))


THREAD = ("thread_id",)
SOURCE = ("source_id",)
CAS = ("source_id", "expected_revision")
SPECS = (
    Spec("memory/capabilities/read", "GetCapabilities", "What the server offers to this caller."),
    Spec("thread/memoryMode/read", "ReadThreadMemoryMode", "A thread's memory mode.", THREAD),
    Spec(
        "thread/memoryMode/set",
        "SetThreadMemoryMode",
        "Set a thread's memory mode: a compare-and-swap with expectedRevision (0 for a "
        "thread never set), else an unconditional set.",
        ("thread_id", "mode"),
        decision=person.THREAD_MODE,
    ),
    Spec("memory/insert", "InsertMemory", "Store a memory, with its save intent."),
    Spec("memory/sources/list", "ListSources", "Sources, metadata only (never text)."),
    Spec("memory/sources/read", "GetSource", "One source; text only with includeContent.", SOURCE),
    Spec(
        "memory/sources/classification/set",
        "SetSourceClassification",
        "Mark a source active or cold (compare-and-swap).",
        (*CAS, "classification"),
        decision=person.CLASSIFY,
    ),
    Spec(
        "memory/sources/append",
        "AppendMessages",
        "Append a session's next messages to its stored conversation (compare-and-swap).",
        (*CAS, "messages"),
    ),
    Spec(
        "memory/sources/revoke",
        "RevokeSource",
        "Revoke a source for good.",
        SOURCE,
        decision=person.REVOKE,
    ),
    Spec(
        "memory/sources/assent/revoke",
        "RevokeAssent",
        "Revoke a foreign source's assent.",
        ("source_id", "assent_id"),
    ),
    Spec("memory/sources/readback", "ReadbackSource", "Every derived record of a source.", SOURCE),
    Spec(
        "memory/sources/erase",
        "EraseSource",
        "Erase a source and all it derived.",
        CAS,
        decision=person.ERASE,
    ),
    Spec("memory/search", "SearchMemories", "Search eligible memories.", ("query",), {"limit": 10}),
    Spec(
        "memory/prompt/assemble",
        "AssemblePrompt",
        "The memory block to inject into a thread's prompt.",
        ("query",),
        {"token_budget": 500},
    ),
    Spec(
        "memory/retrieval/explain",
        "ExplainRetrieval",
        "Why each matching source was selected or filtered (ids and reasons, no text).",
        ("query",),
        {"limit": 10},
    ),
    Spec("memory/review/list", "ListMemories", "Memories by review status."),
    Spec(
        "memory/review/approve",
        "ReviewMemory",
        "Approve a pending memory.",
        CAS,
        fixed={"decision": "approve"},
        decision=person.APPROVE,
    ),
    Spec(
        "memory/review/reject",
        "ReviewMemory",
        "Reject a pending memory.",
        CAS,
        fixed={"decision": "reject"},
        decision=person.REJECT,
    ),
    Spec("memory/insertPolicy/read", "GetInsertPolicy", "The tenant's insert policy."),
    Spec(
        "memory/insertPolicy/set",
        "SetInsertPolicy",
        "Override the tenant's insert policy (compare-and-swap).",
        ("expected_revision", "insert_policy"),
        decision=person.POLICY,
    ),
    Spec("memory/facts/search", "SearchFacts", "Facts from eligible memories, with provenance."),
    Spec(
        "memory/facts/retract",
        "RetractFact",
        "Say a fact is wrong: it leaves every read, the value before it is current again.",
        ("fact_id",),
        decision=person.RETRACT,
    ),
    Spec("memory/profile/read", "GetProfile", "The user's profile, from eligible facts."),
    Spec(
        "memory/ask",
        "Ask",
        "An answer from facts and memories.",
        ("question",),
        {"token_budget": 300},
    ),
    Spec(
        "memory/foreign/prepare",
        "PrepareForeignSource",
        "The identity a foreign source would get, for its owner to sign.",
        ("canonical_owner", "pointer"),
    ),
    Spec(
        "memory/foreign/admit",
        "AdmitForeignSource",
        "Admit a thin pointer with its canonical owner's assent.",
        ("canonical_owner", "pointer", "assent"),
    ),
    Spec(
        "memory/ownerKeys/register",
        "RegisterOwnerKey",
        "Register a canonical owner's public key.",
        ("owner_id", "key_id", "public_key_pem"),
    ),
    Spec(
        "memory/ownerKeys/revoke",
        "RevokeOwnerKey",
        "Retire an owner's key.",
        ("owner_id", "key_id"),
    ),
    Spec("memory/audit/list", "ListAuditReceipts", "The tenant's audit receipts, oldest first."),
    Spec("memory/audit/verify", "VerifyAuditChain", "Recompute the receipts' hash chain."),
)
# notification name, Event payload field, the RPC that makes such an event: the RPC table's,
# in the order of the event kinds' numbers
EVENT_NOTIFICATIONS = tuple(
    sorted(
        ((event.notification, event.field, rpc.name) for rpc in rpcs.TABLE for event in rpc.events),
        key=lambda n: events_pb2.EventKind.Value(f"EVENT_KIND_{n[1].upper()}"),
    )
)
# Every notification also carries its event's position, for a host to resume after it.
EVENT_SEQUENCE = (StrictInt, Field(alias="eventSequence", description="Resume after this."))


def capability_of(rpc: str) -> str | None:
    return rpcs.BY_NAME[rpc].capability


def _build() -> tuple[dict[str, Method], dict[str, Notification]]:
    registry = Registry()  # results first: a message both ways names its params model ...Input
    results = {
        spec.name: registry.top(
            f"{type_name(spec.name)}Response",
            SERVICE.methods_by_name[spec.rpc].output_type,
            "result",
            doc=f"The result of {spec.name}.",
        )
        for spec in SPECS
    }
    notifications: dict[str, Notification] = {}
    for name, event, rpc in EVENT_NOTIFICATIONS:
        payload = protojson.message_type(_EVENT.fields_by_name[event])
        params = registry.top(
            f"{type_name(name)}Notification",
            payload,
            "result",
            doc=f"Event {payload.name}.",
            extra={"event_sequence": EVENT_SEQUENCE},
        )
        gates = frozenset(c for c in (EVENTS_CAPABILITY, capability_of(rpc)) if c)
        notifications[name] = Notification(name, event, rpc, params, gates)
    methods = {
        spec.name: Method(
            spec,
            capability_of(spec.rpc),
            registry.top(
                f"{type_name(spec.name)}Params",
                SERVICE.methods_by_name[spec.rpc].input_type,
                "params",
                doc=spec.description,
                required=spec.required,
                defaults=spec.defaults,
                omit=spec.fixed,
            ),
            results[spec.name],
        )
        for spec in SPECS
    }
    return methods, notifications


# Codex's own memory methods (`upstream`): the RPC whose capability gates each.
UPSTREAM = (
    ("thread/memory/read", "GetProfile", upstream.ThreadMemoryReadParams,
     upstream.ThreadMemoryReadResponse, upstream.thread_memory_read),
    ("memory/status", "GetCapabilities", upstream.MemoryStatusParams,
     upstream.MemoryStatusResponse, upstream.memory_status),
    ("memory/reset", "EraseSource", upstream.MemoryResetParams,
     upstream.MemoryResetResponse, upstream.memory_reset),
)  # fmt: skip

METHODS, NOTIFICATIONS = _build()
METHODS.update(
    (name, Method(Spec(name, rpc, params.__doc__ or ""), capability_of(rpc), params, result, run))
    for name, rpc, params, result, run in UPSTREAM
)
