"""Authentication: a bearer token resolves to a principal (tenant and scopes included).

API keys are configured by their SHA-256 only; the token itself is never stored or logged.
With `auth.oidc` configured, a bearer token shaped like a JWT is verified as one instead
(`protocol_svc.oidc`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel.config import ApiKey
from protocol_svc.peer_limits import FailedAuthLimiter


@dataclass(frozen=True)
class Principal:
    principal_id: str
    tenant_id: str
    kind: str  # user | agent | service
    scopes: frozenset[str]
    # The save intents this principal's claims are believed for (the runtime decides).
    trusted_save_intents: frozenset[str] = save_intents.ALL
    # When the credential stops being valid (seconds since the epoch; None: an API key,
    # valid until removed from the config). An open stream ends then.
    expires_at: float | None = None


class TokenVerifier(Protocol):
    def looks_like_jwt(self, token: str) -> bool: ...
    async def verify(self, token: str) -> Principal: ...


class Authenticator:
    def __init__(
        self,
        api_keys: Sequence[ApiKey],
        jwt: TokenVerifier | None = None,
        failures: FailedAuthLimiter | None = None,
    ) -> None:
        self._by_hash = {
            k.sha256: Principal(
                k.principal,
                k.tenant,
                k.kind.value,
                frozenset(k.scopes),
                frozenset(k.trusted_save_intents),
            )
            for k in api_keys
        }
        self._jwt = jwt
        self._failures = failures or FailedAuthLimiter(0, 0)

    async def authenticate_call(self, authorization: str | None, peer: str = "") -> Principal:
        """API keys at once; a JWT may wait for its key set (never blocking the loop).
        A peer over its failed-authentication limit gets no verification work: an API key
        is still recognised, anything else is RATE_LIMITED (`peer_limits`)."""
        wait = self._failures.reserve(peer)
        try:
            if wait:
                principal = self.authenticate(authorization)
            elif self._jwt is not None and self._jwt.looks_like_jwt(
                token := _bearer(authorization)
            ):
                principal = await self._jwt.verify(token)
            else:
                principal = self.authenticate(authorization)
        except AgentmemError as e:
            if wait and e.reason is Reason.UNAUTHENTICATED:
                raise self._failures.refused(wait) from None
            if e.reason is not Reason.UNAUTHENTICATED:
                self._failures.succeeded(peer)  # the provider failed, not the caller
            raise
        if not wait:
            self._failures.succeeded(peer)
        return principal

    def authenticate(self, authorization: str | None) -> Principal:
        token = _bearer(authorization)
        digest = hashlib.sha256(token.encode()).hexdigest()
        # Looking up the token's hash (never the token) leaks nothing useful through timing.
        principal = self._by_hash.get(digest)
        if principal is None:
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="unknown token")
        return principal


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise AgentmemError(Reason.UNAUTHENTICATED, detail="no authorization metadata")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 4096:
        raise AgentmemError(Reason.UNAUTHENTICATED, detail="malformed authorization metadata")
    return token
