"""The public MemoryService: every call is already authenticated and authorized by the
guard; here requests are validated and forwarded to the runtime with the call context."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from typing import Any

import grpc

from agentmem.core import experimental, internal_call
from agentmem.core.config import CapabilityState, Settings
from agentmem.core.errors import AgentmemError, Reason
from agentmem.runtime.v1 import runtime_service_pb2 as rpb
from agentmem.v1 import (
    capabilities_pb2,
    common_pb2,
    events_pb2,
    memory_service_pb2_grpc,
    review_pb2,
)
from protocol_svc import validation
from protocol_svc.capabilities import CapabilityGate, opted_in
from protocol_svc.limits import Limiter
from protocol_svc.policy import POLICY, SERVICE
from protocol_svc.runtime_client import RuntimeClient
from protocol_svc.watch import watch

API_VERSION = "agentmem.v1"
CALL: contextvars.ContextVar[rpb.CallContext] = contextvars.ContextVar("call")
# When the call's credential expires (epoch seconds; None: never). Set by the admission.
EXPIRES: contextvars.ContextVar[float | None] = contextvars.ContextVar("expires", default=None)
INSERT_POLICIES = {
    "permissive": common_pb2.INSERT_POLICY_PERMISSIVE,
    "require_save_intent": common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT,
    "review_pending": common_pb2.INSERT_POLICY_REVIEW_PENDING,
}


def _fields(call: rpb.CallContext) -> dict[str, Any]:
    """The fields that are set (an unset message field stays unset in the copy)."""
    return {f.name: value for f, value in call.ListFields()}


class MemoryServicer(memory_service_pb2_grpc.MemoryServiceServicer):
    def __init__(self, settings: Settings, runtime: RuntimeClient, limiter: Limiter) -> None:
        self._settings = settings
        self._runtime = runtime
        self._gate = CapabilityGate(settings)
        self._limiter = limiter

    async def _forward(self, name: str, request: Any, context: grpc.aio.ServicerContext) -> Any:
        validation.VALIDATORS[name](request)
        rule = POLICY[f"/{SERVICE.full_name}/{name}"]
        call = CALL.get()
        idempotent = rule.idempotent
        if "request_id" in request.DESCRIPTOR.fields_by_name and request.request_id:
            call = rpb.CallContext(**{**_fields(call), "request_id": request.request_id})
            idempotent = idempotent or name == "InsertMemory"  # the runtime deduplicates it
        return await self._runtime.unary(
            name, request, call, time_remaining=context.time_remaining(), idempotent=idempotent
        )

    async def GetCapabilities(self, request, context):  # type: ignore[no-untyped-def]
        if self._gate.state("save_intent") is not CapabilityState.OFF:
            # the tenant's policy (an admin may have overridden it)
            policy = (
                await self._runtime.unary(
                    "GetInsertPolicy",
                    review_pb2.GetInsertPolicyRequest(),
                    CALL.get(),
                    time_remaining=context.time_remaining(),
                    idempotent=True,
                )
            ).insert_policy
        else:
            policy = INSERT_POLICIES[self._settings.memory.insert_policy.value]
        retrieval = await self._runtime.unary(
            "GetRetrievalStatus",
            request,
            CALL.get(),
            time_remaining=context.time_remaining(),
            idempotent=True,
        )
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

    async def GetSource(self, request, context):  # type: ignore[no-untyped-def]
        if request.include_content and "memory.content.read" not in CALL.get().scopes:
            raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": "memory.content.read"})
        return await self._forward("GetSource", request, context)

    async def WatchEvents(  # type: ignore[no-untyped-def]
        self, request, context
    ) -> AsyncIterator[events_pb2.WatchEventsResponse]:
        validation.VALIDATORS["WatchEvents"](request)
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


def _forwarder(name: str):  # type: ignore[no-untyped-def]
    async def forward(self: MemoryServicer, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._forward(name, request, context)

    forward.__name__ = forward.__qualname__ = name
    return forward


# Every unary RPC the servicer does not define itself is validated and forwarded as it is.
for _method in SERVICE.methods:
    if _method.name not in vars(MemoryServicer) and not _method.server_streaming:
        setattr(MemoryServicer, _method.name, _forwarder(_method.name))
