"""Configuration of who may call: API keys, OpenID Connect tokens and the scopes they carry."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, field_validator, model_validator

from agentmem.contract.save_intents import SaveIntentName
from agentmem_kernel.config_base import Strict

SCOPES = (
    "memory.read",
    "memory.write",
    "memory.content.read",
    "memory.policy",
    "memory.review",
    "memory.admit",
    "memory.admin",
)


class PrincipalKindName(StrEnum):
    USER = "user"
    AGENT = "agent"
    SERVICE = "service"


class ApiKey(Strict):
    principal: str = Field(min_length=1, max_length=128)
    tenant: str = Field(min_length=1, max_length=128)
    kind: PrincipalKindName = PrincipalKindName.USER
    scopes: tuple[str, ...] = ()
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="hex SHA-256 of the token")
    # The save intents this key's claims are believed for; a claim outside the list is
    # stored pending review (held), whatever the insert policy.
    trusted_save_intents: tuple[SaveIntentName, ...] = tuple(SaveIntentName)

    @field_validator("scopes")
    @classmethod
    def _known_scopes(cls, scopes: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown:
            raise ValueError(f"unknown scope(s) {unknown}; known: {list(SCOPES)}")
        return scopes


class Oidc(Strict):
    """Bearer JWTs from an OpenID Connect provider, beside API keys (docs/operations.md, "OIDC")."""

    issuer: str = Field(min_length=1)
    audience: str = Field(min_length=1)
    # Where the signing keys come from: the provider's JWKS URL, or a JWKS file (static keys).
    jwks_url: str = ""
    jwks_file: str = ""
    # Seconds the fetched key set is reused before it is fetched again (in the background).
    jwks_cache_seconds: int = Field(default=300, ge=1)
    # Seconds after its fetch that the last good key set keeps serving while the provider
    # cannot be reached; and how long callers wait at most for a fetch.
    jwks_max_stale_seconds: int = Field(default=3600, ge=1)
    jwks_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    # Seconds of clock skew allowed on exp / nbf / iat.
    leeway: float = Field(default=30.0, ge=0)
    # Claim mapping. A token without the tenant claim is refused.
    tenant_claim: str = "tenant_id"
    principal_claim: str = "sub"
    # A claim holding user | agent | service (empty: every token is `default_kind`).
    kind_claim: str = ""
    default_kind: PrincipalKindName = PrincipalKindName.USER
    # A space-separated string or a list; scopes agentmem does not know are ignored.
    scopes_claim: str = "scope"
    # The save intents each principal kind is trusted to claim (a kind not listed: all).
    trusted_save_intents_by_kind: dict[PrincipalKindName, tuple[SaveIntentName, ...]] = {}

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, algorithms: tuple[str, ...]) -> tuple[str, ...]:
        allowed = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"}
        allowed |= {"ES512", "EdDSA"}
        bad = sorted(set(algorithms) - allowed)
        if bad or not algorithms:
            raise ValueError(f"unsupported algorithm(s) {bad}; use some of {sorted(allowed)}")
        return algorithms

    @model_validator(mode="after")
    def _one_key_source(self) -> Oidc:
        if bool(self.jwks_url) == bool(self.jwks_file):
            raise ValueError("set exactly one of jwks_url and jwks_file")
        return self


class Auth(Strict):
    api_keys: tuple[ApiKey, ...] = ()
    oidc: Oidc | None = None
