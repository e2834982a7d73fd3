"""The public MemoryService: every call is already authenticated and authorized by the
guard; here requests are validated and forwarded to the runtime with the call context."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator

from agentmem.contract import experimental
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.v1 import (
    capabilities_pb2,
    common_pb2,
    events_pb2,
    memory_service_pb2_grpc,
    sources_pb2,
)
from agentmem_kernel import internal_call
from agentmem_kernel.config import CapabilityState, Settings
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from protocol_svc import validation
from protocol_svc.capabilities import CapabilityGate, opted_in
from protocol_svc.forwarding import CALL, Context, Forwarding
from protocol_svc.limits import Limiter
from protocol_svc.runtime_client import RuntimeClient
from protocol_svc.watch import watch

API_VERSION = "agentmem.v1"
# When the call's credential expires (epoch seconds; None: never). Set by the admission.
EXPIRES: contextvars.ContextVar[float | None] = contextvars.ContextVar("expires", default=None)
INSERT_POLICIES = {
    "permissive": common_pb2.INSERT_POLICY_PERMISSIVE,
    "require_save_intent": common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT,
    "review_pending": common_pb2.INSERT_POLICY_REVIEW_PENDING,
}


class MemoryServicer(Forwarding, memory_service_pb2_grpc.MemoryServiceServicer):
    """Every RPC of `agentmem.v1.MemoryService`: those below written here, the rest
    forwarded as they are (`Forwarding`)."""

    def __init__(self, settings: Settings, runtime: RuntimeClient, limiter: Limiter) -> None:
        self._settings = settings
        self._runtime = runtime
        self._gate = CapabilityGate(settings)
        self._limiter = limiter

    async def GetCapabilities(
        self, request: capabilities_pb2.GetCapabilitiesRequest, context: Context
    ) -> capabilities_pb2.GetCapabilitiesResponse:
        known = await self._runtime.unary(  # the tenant's insert policy, retrieval's state
            "GetCapabilities",
            request,
            CALL.get(),
            time_remaining=context.time_remaining(),
            idempotent=True,
        )
        policy = known.insert_policy  # the tenant's (an admin may have overridden it)
        if self._gate.state("save_intent") is CapabilityState.OFF:
            policy = INSERT_POLICIES[self._settings.memory.insert_policy.value]
        retrieval = known.retrieval
        return capabilities_pb2.GetCapabilitiesResponse(
            api_version=API_VERSION,
            capabilities=[
                *self._gate.describe(opted_in(context)),
                capabilities_pb2.Capability(
                    name="hybrid_retrieval", enabled=retrieval.mode == "hybrid"
                ),
            ],
            insert_policy=policy,
            caller=_caller(CALL.get()),
            experimental_opt_in=experimental.METADATA_KEY,
            retrieval=retrieval,
        )

    async def GetSource(
        self, request: sources_pb2.GetSourceRequest, context: Context
    ) -> sources_pb2.Source:
        if request.include_content and "memory.content.read" not in CALL.get().scopes:
            raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": "memory.content.read"})
        return await self._forward("GetSource", request, context, sources_pb2.Source)

    async def WatchEvents(
        self, request: events_pb2.WatchEventsRequest, context: Context
    ) -> AsyncIterator[events_pb2.WatchEventsResponse]:
        validation.validate(request)
        call = CALL.get()
        with self._limiter.watch(call.tenant_id):
            async for event in watch(
                request,
                lambda resume, connected: self._runtime.stream_events(resume, call, connected),
                queue_size=self._settings.events.subscriber_queue,
                reconnect_for=self._settings.gateway.watch_reconnect,
                credential_expires=EXPIRES.get(),
            ):
                yield events_pb2.WatchEventsResponse(event=event)


def _caller(call: rpb.CallContext) -> capabilities_pb2.Caller:
    kinds = {v: k for k, v in internal_call.PRINCIPAL_KINDS.items()}
    return capabilities_pb2.Caller(
        principal_id=call.principal_id,
        principal_kind=kinds.get(call.principal_kind, "service"),
        scopes=sorted(call.scopes),
        trusted_save_intents=sorted(call.save_intent_trust.intents),
    )
