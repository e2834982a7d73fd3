"""Who may call the runtime: the gateway only, with the internal token (and, with internal
TLS, the gateway's client certificate). The call's tenant and principal come from there."""

from __future__ import annotations

from typing import Any

import grpc

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import internal_call, tls
from agentmem_kernel.config import Settings
from agentmem_kernel.guard import Admit
from runtime_svc.grpc.servicer import CALLER, caller_from


def admission(settings: Settings) -> Admit:
    """The guard's admission of a runtime call: the caller set for the servicer, and the
    call's log fields returned."""

    async def admit(method: str, context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
        if settings.internal.tls:
            peer = {k: list(v) for k, v in context.auth_context().items()}
            if settings.internal.gateway_name not in tls.peer_names(peer):
                raise AgentmemError(Reason.UNAUTHENTICATED, detail="client certificate name")
        ctx = internal_call.read(settings.internal.token, context.invocation_metadata())
        if ctx is None or not ctx.tenant_id:
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="not the gateway")
        CALLER.set(caller_from(ctx))
        return {
            "tenant": ctx.tenant_id,
            "principal": ctx.principal_id,
            "trace_id": ctx.trace_id,
        }

    return admit
