"""Assembles the gateway from its settings and starts its gRPC server."""

from __future__ import annotations

import secrets

import grpc

from agentmem.core import internal_call, serving, tls, transport
from agentmem.core.config import Settings
from agentmem.core.errors import AgentmemError, Reason
from agentmem.core.guard import CallGuard
from agentmem.runtime.v1 import runtime_service_pb2 as rpb
from agentmem.v1 import memory_service_pb2_grpc
from protocol_svc.auth import Authenticator
from protocol_svc.policy import SERVICE, method_name, rule_for
from protocol_svc.runtime_client import RuntimeClient
from protocol_svc.servicer import CALL, MemoryServicer


def admission(settings: Settings, authenticator: Authenticator):  # type: ignore[no-untyped-def]
    """authenticate → authorize (scope) → capability; validation follows in the servicer."""
    capabilities = settings.capabilities.model_dump()

    async def admit(method: str, context: grpc.aio.ServicerContext) -> dict[str, str]:
        entries = context.invocation_metadata() or ()
        metadata = {m.key: m.value for m in entries}
        if sum(1 for m in entries if m.key == "authorization") > 1:
            # Which one would count is a guess an attacker can steer: refuse them all.
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="more than one authorization")
        principal = authenticator.authenticate(metadata.get("authorization"))
        rule = rule_for(method)
        if rule is None:
            raise AgentmemError(Reason.MISSING_SCOPE, detail=f"no policy entry for {method}")
        if rule.scope not in principal.scopes:
            raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": rule.scope})
        if rule.capability and not capabilities[rule.capability]:
            raise AgentmemError(
                Reason.CAPABILITY_DISABLED, metadata={"capability": rule.capability}
            )
        trace_id = metadata.get("x-request-id")
        if not (isinstance(trace_id, str) and 0 < len(trace_id) <= 128 and trace_id.isprintable()):
            trace_id = secrets.token_hex(8)
        CALL.set(
            rpb.CallContext(
                tenant_id=principal.tenant_id,
                principal_id=principal.principal_id,
                principal_kind=internal_call.PRINCIPAL_KINDS[principal.kind],
                scopes=sorted(principal.scopes),
                surface="grpc",
                trace_id=trace_id,
            )
        )
        return {
            "tenant": principal.tenant_id,
            "principal": principal.principal_id,
            "trace_id": trace_id,
            "rpc": method_name(method),
        }

    return admit


async def start(
    settings: Settings, *, listen: str | None = None, runtime_address: str | None = None
) -> serving.Served:
    if not settings.internal.token:
        raise SystemExit(
            "internal.token is not set (AGENTMEM_INTERNAL__TOKEN): the gateway "
            "needs it to call the runtime"
        )
    internal = settings.internal
    runtime = RuntimeClient(
        runtime_address or settings.gateway.runtime_address,
        internal.token,
        default_deadline=settings.gateway.default_deadline,
        channel_credentials=tls.gateway_credentials(internal) if internal.tls else None,
        target_name=internal.runtime_name,
        options=transport.channel_options(settings.transport),
    )
    servicer = MemoryServicer(settings, runtime)
    served = await serving.start(
        listen=listen or settings.gateway.listen,
        register=lambda s: memory_service_pb2_grpc.add_MemoryServiceServicer_to_server(servicer, s),
        services=[SERVICE.full_name],
        guard=CallGuard(
            admission(settings, Authenticator(settings.auth.api_keys)),
            serving.OPEN_PREFIXES,
            max_message_bytes=settings.transport.max_message_bytes,
        ),
        options=transport.server_options(settings.transport),
        grace=settings.gateway.grace,
        reflection_enabled=settings.gateway.reflection,
        health_listen=settings.gateway.health_listen,
    )
    served.on_stop.append(runtime.close)
    return served
