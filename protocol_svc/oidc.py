"""OIDC / JWT bearer tokens: verified against the provider's keys, mapped to a principal.

PyJWT checks the signature (asymmetric algorithms only, from the configured list), `iss`,
`aud`, `exp` (required), `nbf` and `iat`. Keys come from the JWKS URL (`protocol_svc.jwks`:
one fetch for all waiting callers, the last good set kept through an outage) or from a JWKS
file read once. The key is chosen by the header's `kid` and must suit the header's `alg`
(its `kty`, its curve, and its own `alg` if it names one), so a forged header can only fail
to verify. Configured claims give the tenant (required), principal, kind and scopes.

Every failure to verify is UNAUTHENTICATED, whatever the token holds; a key set that cannot
be fetched is UNAVAILABLE / IDENTITY_PROVIDER_UNAVAILABLE. The token and its claims are
never logged, only which check failed.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import jwt

from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel.config import SCOPES, Oidc, PrincipalKindName
from protocol_svc.auth import Principal
from protocol_svc.jwks import Jwk, RemoteKeys, StaticKeys

KINDS = ("user", "agent", "service")
MAX_ID = 128


def _refused(detail: str) -> AgentmemError:
    return AgentmemError(Reason.UNAUTHENTICATED, detail=f"jwt: {detail}")


class JwtVerifier:
    def __init__(self, config: Oidc) -> None:
        self._config = config
        self._keys = RemoteKeys(config) if config.jwks_url else StaticKeys(config.jwks_file)

    @staticmethod
    def looks_like_jwt(token: str) -> bool:
        return token.count(".") == 2 and token.startswith("eyJ")

    async def verify(self, token: str) -> Principal:
        """Waits only for a key set fetch (on the event loop; the fetch in a thread)."""
        try:
            header = jwt.get_unverified_header(token)
        except Exception:  # not base64, not JSON, not an object, ...
            raise _refused("malformed header") from None
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in self._config.algorithms:
            raise _refused("algorithm not allowed")
        if kid is not None and not isinstance(kid, str):
            raise _refused("malformed kid")
        key = _usable_key(await self._keys.keys_for(kid), alg)
        c = self._config
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=c.audience,
                issuer=c.issuer,
                leeway=c.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except Exception as e:  # PyJWTError, and whatever a hostile token makes escape it
            raise _refused(type(e).__name__) from None
        if not isinstance(claims, dict):
            raise _refused("claims are not an object")
        return self._principal(claims)

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
        exp = claims.get("exp")  # required, and checked by PyJWT to be a number
        return Principal(
            principal_id=principal,
            tenant_id=tenant,
            kind=kind,
            scopes=known,
            trusted_save_intents=frozenset(trusted),
            expires_at=float(exp) if isinstance(exp, (int, float)) else None,
        )


def _valid_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID and value.isprintable()


def _usable_key(candidates: list[Jwk], alg: str) -> Any:
    """The first key of the set that can verify `alg`: its own `alg`, if it names one, must
    be the header's, and its type must suit the algorithm (PyJWK refuses an RSA key for
    ES256, for instance)."""
    for jwk in candidates:
        if jwk.get("alg") not in (None, alg):
            continue
        try:
            return jwt.PyJWK(dict(jwk), algorithm=alg).key
        except Exception:  # wrong key type or curve, a key PyJWT cannot read
            continue
    raise _refused("no key of the set suits the token's kid and alg")
