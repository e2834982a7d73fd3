"""Configuration of the limits on a tenant's use, with per-tenant overrides."""

from __future__ import annotations

from pydantic import Field

from agentmem_kernel.config_base import Strict


class LimitValues(Strict):
    """0 means unlimited."""

    requests_per_second_per_tenant: float = Field(default=0, ge=0)
    burst_per_tenant: int = Field(default=0, ge=0)  # 0: one second's worth (at least 1)
    requests_per_second_per_principal: float = Field(default=0, ge=0)
    burst_per_principal: int = Field(default=0, ge=0)
    watches_per_tenant: int = Field(default=0, ge=0)
    memories_per_tenant: int = Field(default=0, ge=0)
    bytes_per_tenant: int = Field(default=0, ge=0)


class TenantLimits(Strict):
    """A tenant's overrides; an unset key keeps the deployment's value."""

    requests_per_second_per_tenant: float | None = Field(default=None, ge=0)
    burst_per_tenant: int | None = Field(default=None, ge=0)
    requests_per_second_per_principal: float | None = Field(default=None, ge=0)
    burst_per_principal: int | None = Field(default=None, ge=0)
    watches_per_tenant: int | None = Field(default=None, ge=0)
    memories_per_tenant: int | None = Field(default=None, ge=0)
    bytes_per_tenant: int | None = Field(default=None, ge=0)


class Limits(LimitValues):
    # Request rates and watches are counted by each gateway replica, which enforces its share
    # (the value divided by gateway_replicas); stored quotas are exact, in the runtime.
    gateway_replicas: int = Field(default=1, ge=1)
    tenants: dict[str, TenantLimits] = Field(default_factory=dict)
    # Failed authentications per peer IP address and gateway replica (0: unlimited); a peer
    # over it gets RATE_LIMITED without its credential being verified (API keys still work).
    failed_auth_per_second_per_peer: float = Field(default=10.0, ge=0)
    failed_auth_burst_per_peer: int = Field(default=100, ge=1)
    # What one insert may hold (the runtime checks them; a request is also bounded by
    # `transport.max_message_bytes`): a conversation's messages (at most 254: a passage's
    # message range is part of its index key), the characters of one text or message, and
    # of all a conversation's messages together.
    max_messages_per_insert: int = Field(default=254, ge=1, le=254)
    max_message_chars: int = Field(default=1_000_000, ge=1_000)
    max_conversation_chars: int = Field(default=1_000_000, ge=1_000)

    def for_tenant(self, tenant_id: str) -> LimitValues:
        base = {name: getattr(self, name) for name in LimitValues.model_fields}
        override = self.tenants.get(tenant_id)
        if override is not None:
            base.update(override.model_dump(exclude_none=True))
        return LimitValues(**base)
