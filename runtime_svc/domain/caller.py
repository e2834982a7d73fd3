"""Who is calling, as the gateway authenticated them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    tenant_id: str
    principal_id: str
    principal_kind: str  # "user" | "agent" | "service"
    scopes: frozenset[str]
    # The caller's idempotency key (the request's request_id field), or "".
    request_id: str = ""
    surface: str = "grpc"
