"""Assembles the gateway from its settings and starts its gRPC server."""

from __future__ import annotations

import secrets
from typing import Any

import grpc
from opentelemetry.sdk.trace.export import SpanExporter

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.v1 import memory_service_pb2_grpc
from agentmem_kernel import internal_call, metrics, serving, tls, tracing, transport
from agentmem_kernel.config import Settings
from agentmem_kernel.guard import Admit, CallGuard
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from protocol_svc import public_tls
from protocol_svc.auth import Authenticator
from protocol_svc.capabilities import CapabilityGate, opted_in
from protocol_svc.forwarding import CALL
from protocol_svc.limits import Limiter
from protocol_svc.oidc import JwtVerifier
from protocol_svc.peer_limits import FailedAuthLimiter, peer_address
from protocol_svc.policy import SERVICE, method_name, rule_for
from protocol_svc.runtime_client import RuntimeClient
from protocol_svc.servicer import EXPIRES, MemoryServicer
from protocol_svc.watch import ACTIVE

metrics.GAUGES.add("agentmem_watchers", "Event watchers open on this gateway.", ACTIVE.__len__)
metrics.GAUGES.add(
    "agentmem_watch_queue_depth_max",
    "Events queued for the slowest watcher on this gateway (cut off at events.subscriber_queue).",
    lambda: max((q.qsize() for q in list(ACTIVE)), default=0),
)


def admission(settings: Settings, authenticator: Authenticator, limiter: Limiter) -> Admit:
    """authenticate → rate limits → authorize (scope) → capability; validation follows in
    the servicer."""
    gate = CapabilityGate(settings)

    async def admit(method: str, context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
        entries = context.invocation_metadata() or ()
        metadata = dict(entries)
        if sum(1 for key, _ in entries if key == "authorization") > 1:
            # Which one would count is a guess an attacker can steer: refuse them all.
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="more than one authorization")
        principal = await authenticator.authenticate_call(
            metadata.get("authorization"), peer_address(context.peer() or "")
        )
        limiter.admit(principal.tenant_id, principal.principal_id)
        rule = rule_for(method)
        if rule is None:
            raise AgentmemError(Reason.MISSING_SCOPE, detail=f"no policy entry for {method}")
        if rule.scope not in principal.scopes:
            raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": rule.scope})
        if rule.capability:
            gate.check(rule.capability, opted_in(context))
        trace_id = metadata.get("x-request-id")
        if not (isinstance(trace_id, str) and validation.is_identifier(trace_id)):
            trace_id = secrets.token_hex(8)
        EXPIRES.set(principal.expires_at)
        CALL.set(
            rpb.CallContext(
                tenant_id=principal.tenant_id,
                principal_id=principal.principal_id,
                principal_kind=internal_call.PRINCIPAL_KINDS[principal.kind],
                scopes=sorted(principal.scopes),
                surface="grpc",
                trace_id=trace_id,
                save_intent_trust=rpb.SaveIntentTrust(
                    intents=sorted(principal.trusted_save_intents)
                ),
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
    settings: Settings,
    *,
    listen: str | None = None,
    runtime_address: str | None = None,
    span_exporter: SpanExporter | None = None,
) -> serving.Served:
    """`span_exporter` receives this process's spans as well (tests use an in-memory one)."""
    if not settings.internal.token:
        raise SystemExit(
            "internal.token is not set (AGENTMEM_INTERNAL__TOKEN): the gateway "
            "needs it to call the runtime"
        )
    internal = settings.internal
    listen = listen or settings.gateway.listen
    credentials = public_tls.server_credentials(settings.gateway, listen)
    tracer_provider = tracing.provider(settings.tracing, "agentmem-gateway", span_exporter)
    oidc = settings.auth.oidc
    limits = settings.limits
    authenticator = Authenticator(
        settings.auth.api_keys,
        JwtVerifier(oidc) if oidc else None,
        FailedAuthLimiter(
            limits.failed_auth_per_second_per_peer, limits.failed_auth_burst_per_peer
        ),
    )
    limiter = Limiter(settings.limits)
    runtime = RuntimeClient(
        runtime_address or settings.gateway.runtime_address,
        internal.token,
        default_deadline=settings.gateway.default_deadline,
        channel_credentials=tls.gateway_credentials(internal) if internal.tls else None,
        target_name=internal.runtime_name,
        interceptors=tracing.client_interceptors(tracer_provider),
        options=transport.channel_options(settings.transport),
    )
    servicer = MemoryServicer(settings, runtime, limiter)
    served = await serving.start(
        listen=listen,
        credentials=credentials,
        register=lambda s: _register(servicer, s),
        services=[SERVICE.full_name],
        guard=CallGuard(
            admission(settings, authenticator, limiter),
            serving.OPEN_PREFIXES,
            max_message_bytes=settings.transport.max_message_bytes,
            max_metadata_bytes=settings.transport.max_metadata_bytes,
        ),
        options=transport.server_options(settings.transport),
        grace=settings.gateway.grace,
        reflection_enabled=settings.gateway.reflection,
        health_listen=settings.gateway.health_listen,
        metrics_listen=settings.gateway.metrics_listen,
        interceptors=tracing.server_interceptors(tracer_provider),
    )
    served.on_stop.append(runtime.close)
    if tracer_provider is not None:
        served.on_stop.append(tracer_provider.shutdown)
    return served


def _register(servicer: MemoryServicer, server: grpc.aio.Server) -> None:
    memory_service_pb2_grpc.add_MemoryServiceServicer_to_server(servicer, server)
