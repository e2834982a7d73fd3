"""Who is calling, as the gateway authenticated them."""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract import save_intents


@dataclass(frozen=True)
class Caller:
    tenant_id: str
    principal_id: str
    principal_kind: str  # "user" | "agent" | "service"
    scopes: frozenset[str]
    # The caller's idempotency key (the request's request_id field), or "".
    request_id: str = ""
    surface: str = "grpc"
    # The save intents this caller's claims are believed for (its credential's list).
    trusted_save_intents: frozenset[str] = save_intents.ALL
