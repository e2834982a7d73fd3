"""Foreign sources: thin pointers to facts someone else owns, admitted only with
the canonical owner's signed assent, bound to an identity that never changes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, FieldViolation, Reason

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
