"""OIDC / JWT bearer tokens: verified against the provider's keys, mapped to a principal.

PyJWT checks the signature (asymmetric algorithms only, from the configured list), `iss`,
`aud`, `exp` (required), `nbf` and `iat`. Keys come from the JWKS URL through a cached
`PyJWKClient` (fetched again after `jwks_cache_seconds`, or when a token names an unknown
key id) or from a JWKS file read once. Configured claims give the tenant (required),
principal, kind and scopes. Every failure is UNAUTHENTICATED; the token and its claims are
never logged, only which check failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jwt

from agentmem.core import save_intents
from agentmem.core.config import SCOPES, Oidc, PrincipalKindName
from agentmem.core.errors import AgentmemError, Reason
from protocol_svc.auth import Principal

KINDS = ("user", "agent", "service")
MAX_ID = 128


class JwtVerifier:
    def __init__(self, config: Oidc) -> None:
        self._config = config
        self._client: jwt.PyJWKClient | None = None
        self._static: jwt.PyJWKSet | None = None
        if config.jwks_url:
            self._client = jwt.PyJWKClient(
                config.jwks_url,
                cache_jwk_set=True,
                lifespan=config.jwks_cache_seconds,
                timeout=5,
            )
        else:
            try:
                self._static = jwt.PyJWKSet.from_dict(
                    json.loads(Path(config.jwks_file).read_text())
                )
            except (OSError, ValueError, jwt.PyJWTError) as e:
                raise SystemExit(f"cannot read auth.oidc.jwks_file: {e}") from None

    @staticmethod
    def looks_like_jwt(token: str) -> bool:
        return token.count(".") == 2 and token.startswith("eyJ")

    def verify(self, token: str) -> Principal:
        """Blocking on a key-set fetch: call it off the event loop."""
        c = self._config
        try:
            key = self._signing_key(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=list(c.algorithms),
                audience=c.audience,
                issuer=c.issuer,
                leeway=c.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as e:
            raise AgentmemError(Reason.UNAUTHENTICATED, detail=f"jwt: {type(e).__name__}") from None
        return self._principal(claims)

    def _signing_key(self, token: str) -> Any:
        if self._client is not None:
            return self._client.get_signing_key_from_jwt(token).key
        assert self._static is not None
        kid = jwt.get_unverified_header(token).get("kid")
        keys = [k for k in self._static.keys if kid is None or k.key_id == kid]
        if not keys:
            raise jwt.InvalidKeyError("no key for the token's kid")
        return keys[0].key

    def _principal(self, claims: dict[str, Any]) -> Principal:
        c = self._config
        tenant = claims.get(c.tenant_claim)
        principal = claims.get(c.principal_claim)
        if not _valid_id(tenant):
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="jwt: no tenant claim")
        if not _valid_id(principal):
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="jwt: no principal claim")
        kind = (
            claims.get(c.kind_claim, c.default_kind.value) if c.kind_claim else c.default_kind.value
        )
        if kind not in KINDS:
            raise AgentmemError(Reason.UNAUTHENTICATED, detail="jwt: unknown principal kind")
        raw = claims.get(c.scopes_claim, "")
        scopes = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
        known = frozenset(s for s in scopes if isinstance(s, str) and s in SCOPES)
        trusted = c.trusted_save_intents_by_kind.get(PrincipalKindName(kind), save_intents.ALL)
        return Principal(
            principal_id=principal,
            tenant_id=tenant,
            kind=kind,
            scopes=known,
            trusted_save_intents=frozenset(trusted),
        )


def _valid_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID and value.isprintable()
