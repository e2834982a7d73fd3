"""Who is calling, as the gateway authenticated them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    tenant_id: str
    principal_id: str
    principal_kind: str  # "user" | "agent" | "service"
    scopes: frozenset[str]
    request_id: str = ""
