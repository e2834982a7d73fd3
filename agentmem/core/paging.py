"""Opaque page tokens bound to the query that issued them (AIP-158).

A token carries the keyset position and a digest of (tenant, method, filter); a token
presented with another query or by another tenant is refused with INVALID_FIELD.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import TypeVar

from agentmem.core.errors import invalid_field

T = TypeVar("T", int, str)


def query_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def encode(key: str, position: int | str) -> str:
    raw = json.dumps({"q": key, "p": position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(token: str, key: str, start: T) -> T:
    """The position after which the next page starts (`start` for no token)."""
    if not token:
        return start
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        position = data["p"]
        ok = data["q"] == key and type(position) is type(start)
    except (ValueError, KeyError, TypeError, binascii.Error):
        ok = False
    if not ok:
        raise invalid_field("page_token", "is not a token of this query")
    return position
