"""How a client opts in to experimental capabilities: one request metadata entry.

    agentmem-experimental: foreign_sources,other_capability

A capability marked experimental on the server refuses calls that do not name it there
(FAILED_PRECONDITION / EXPERIMENTAL_NOT_ENABLED), the way an agent host declares at
initialize that it accepts experimental API.
"""

from __future__ import annotations

from collections.abc import Iterable

METADATA_KEY = "agentmem-experimental"


def encode(capabilities: Iterable[str]) -> str:
    return ",".join(sorted({c.strip() for c in capabilities if c.strip()}))


def decode(values: Iterable[str]) -> frozenset[str]:
    """Every capability named in any `agentmem-experimental` entry (comma-separated)."""
    return frozenset(c.strip() for v in values for c in v.split(",") if c.strip())
