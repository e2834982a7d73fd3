"""Opaque ids: random, prefixed by kind, no sequence numbers that would leak volume."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"
