"""Opaque page tokens, authenticated and bound to the query that issued them (AIP-158).

A token is the keyset position and an HMAC (with a server key) over the position and a
digest of (tenant, method, filter). A token that was not issued by a server holding the
key, for this tenant and this query, is refused with INVALID_ARGUMENT / INVALID_PAGE_TOKEN
before its position is looked at, so a forged position never reaches a query.

The key is derived from the internal credential that every gateway and runtime replica of a
deployment shares (`configure`), so tokens work across replicas and restarts; until it is
configured, a random per-process key is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from typing import TypeVar

from agentmem.contract.errors import AgentmemError, Reason

T = TypeVar("T", int, str)
MAX_INT_POSITION = 2**63 - 1
MAX_STR_POSITION = 256
_MAC_BYTES = 16
_key = secrets.token_bytes(32)


def configure(secret: str) -> None:
    """Derives the page-token key from a deployment secret (the internal credential)."""
    global _key
    if secret:
        _key = hmac.new(secret.encode(), b"agentmem page token v1", hashlib.sha256).digest()


def query_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: str, payload: bytes) -> bytes:
    return hmac.new(_key, key.encode() + b"\x1f" + payload, hashlib.sha256).digest()[:_MAC_BYTES]


def encode(key: str, position: int | str) -> str:
    payload = json.dumps({"p": position}, separators=(",", ":")).encode()
    return f"{_b64(payload)}.{_b64(_mac(key, payload))}"


def invalid_page_token() -> AgentmemError:
    return AgentmemError(Reason.INVALID_PAGE_TOKEN)


def decode(token: str, key: str, start: T) -> T:
    """The position after which the next page starts (`start` for no token)."""
    if not token:
        return start
    try:
        body, _, mac = token.partition(".")
        payload = _unb64(body)
        if not hmac.compare_digest(_unb64(mac), _mac(key, payload)):
            raise invalid_page_token()
        position = json.loads(payload)["p"]
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise invalid_page_token() from None
    if type(position) is not type(start) or not _in_range(position):
        raise invalid_page_token()
    return position


def _in_range(position: int | str) -> bool:
    if isinstance(position, int):
        return 0 <= position <= MAX_INT_POSITION
    return len(position) <= MAX_STR_POSITION
