"""Signature checking for foreign sources: owner keys, assents and revocations as compact JWS
(EdDSA only) verified with PyJWT and cryptography. An adapter: the domain
(`runtime_svc.domain.foreign`) says what an assent must bind; this checks that it does."""

from __future__ import annotations

from collections.abc import Callable

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from agentmem.contract.errors import AgentmemError, Reason, invalid_field
from runtime_svc.domain.foreign import Assent, KeyLookup


def _ed25519(pem: str) -> Ed25519PublicKey:
    """A registered owner key (`check_public_key` admitted only Ed25519 keys)."""
    key = load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise AgentmemError(Reason.ASSENT_INVALID, detail="key type")
    return key


def check_public_key(pem: str) -> str:
    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise invalid_field("public_key_pem", "is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise invalid_field("public_key_pem", "must be an Ed25519 key")
    return pem


def verify_assent(
    token: str,
    *,
    owner: str,
    source_id: str,
    audience: str,
    digest: str,
    keys: KeyLookup,
    is_revoked: Callable[[str], bool],
) -> Assent:
    """The assent, or the first reason it does not count (ASSENT_*)."""
    if not token:
        raise AgentmemError(Reason.ASSENT_MISSING)
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="malformed") from None
    kid = header.get("kid")
    if header.get("alg") != "EdDSA" or not isinstance(kid, str) or not kid:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="alg or kid")
    key = keys(owner, kid)
    if key is None:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="unknown key")
    if not key.active:
        raise AgentmemError(Reason.ASSENT_STALE, detail="key revoked")
    try:
        claims = jwt.decode(
            token,
            _ed25519(key.pem),
            algorithms=["EdDSA"],
            audience=audience,
            issuer=owner,
            options={"require": ["iss", "sub", "aud", "exp", "iat", "jti", "digest"]},
        )
    except jwt.ExpiredSignatureError:
        raise AgentmemError(Reason.ASSENT_EXPIRED) from None
    except jwt.InvalidTokenError as e:
        raise AgentmemError(Reason.ASSENT_INVALID, detail=type(e).__name__) from None
    if claims["sub"] != source_id:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="subject")
    if claims["digest"] != digest:
        raise AgentmemError(Reason.ASSENT_STALE, detail="digest")
    jti = str(claims["jti"])
    if is_revoked(jti):
        raise AgentmemError(Reason.ASSENT_REVOKED)
    return Assent(jti, kid, int(claims["exp"]) * 1_000_000)


def verify_revocation(
    token: str, *, owner: str, source_id: str, assent_id: str, keys: KeyLookup
) -> None:
    """An owner-signed revocation: claims iss = owner, sub = source, jti = assent, and
    action = revoke, signed by one of the owner's active keys."""
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        key = keys(owner, kid) if isinstance(kid, str) else None
        if key is None or not key.active:
            raise AgentmemError(Reason.ASSENT_INVALID, detail="revocation key")
        claims = jwt.decode(
            token,
            _ed25519(key.pem),
            algorithms=["EdDSA"],
            issuer=owner,
            options={"require": ["iss", "sub", "jti"], "verify_aud": False},
        )
    except jwt.InvalidTokenError:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="revocation") from None
    if (claims["sub"], claims["jti"], claims.get("action")) != (source_id, assent_id, "revoke"):
        raise AgentmemError(Reason.ASSENT_INVALID, detail="revocation claims")
