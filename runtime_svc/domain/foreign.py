"""Foreign sources (seed 000): thin pointers to facts someone else owns, admitted only with
the canonical owner's signed assent, bound to an identity that never changes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from agentmem.core import validation
from agentmem.core.errors import AgentmemError, FieldViolation, Reason, invalid_field

MAX_URI, MAX_MEDIA_TYPE, MAX_TITLE, MAX_DESCRIPTOR = 2048, 100, 200, 500
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_MEDIA_TYPE = re.compile(r"^[\w.+-]+/[\w.+-]+$")
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$")


@dataclass(frozen=True)
class Pointer:
    uri: str
    content_digest: str
    media_type: str
    title: str
    descriptor: str

    def raw(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)

    def indexed_text(self) -> str:
        return f"{self.title}\n{self.descriptor}".strip()


def _thin(field: str, rule: str) -> AgentmemError:
    return AgentmemError(Reason.THIN_POINTER_REQUIRED, violations=(FieldViolation(field, rule),))


def check_pointer(p: Pointer, body: str) -> Pointer:
    if body:
        raise _thin("body", "a foreign source carries a thin pointer only, never content")
    if not _URI.match(p.uri) or len(p.uri) > MAX_URI:
        raise _thin("pointer.uri", f"an absolute URI of at most {MAX_URI} characters")
    if not _DIGEST.match(p.content_digest):
        raise _thin("pointer.content_digest", "the SHA-256 of the content, lower-case hex")
    if not _MEDIA_TYPE.match(p.media_type) or len(p.media_type) > MAX_MEDIA_TYPE:
        raise _thin("pointer.media_type", "type/subtype")
    for name, value, limit in (
        ("title", p.title, MAX_TITLE),
        ("descriptor", p.descriptor, MAX_DESCRIPTOR),
    ):
        if len(value) > limit or "\x00" in value:
            raise _thin(f"pointer.{name}", f"at most {limit} characters")
    return p


def identity(owner: str, p: Pointer) -> str:
    """The source id: derived from (owner, uri, content digest), and never changed."""
    validation.identifier("canonical_owner", owner)
    digest = hashlib.sha256(f"{owner}\x1f{p.uri}\x1f{p.content_digest}".encode()).hexdigest()
    return f"fsrc_{digest[:32]}"


def check_public_key(pem: str) -> str:
    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise invalid_field("public_key_pem", "is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise invalid_field("public_key_pem", "must be an Ed25519 key")
    return pem


@dataclass(frozen=True)
class Assent:
    assent_id: str  # jti
    key_id: str
    expires_at_us: int


@dataclass(frozen=True)
class OwnerKey:
    pem: str
    active: bool


KeyLookup = Callable[[str, str], OwnerKey | None]  # (owner, key_id) → key


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
            load_pem_public_key(key.pem.encode()),
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
            load_pem_public_key(key.pem.encode()),
            algorithms=["EdDSA"],
            issuer=owner,
            options={"require": ["iss", "sub", "jti"], "verify_aud": False},
        )
    except jwt.InvalidTokenError:
        raise AgentmemError(Reason.ASSENT_INVALID, detail="revocation") from None
    if (claims["sub"], claims["jti"], claims.get("action")) != (source_id, assent_id, "revoke"):
        raise AgentmemError(Reason.ASSENT_INVALID, detail="revocation claims")
