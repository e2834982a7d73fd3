"""What a message's line costs in a prompt block, remembered across blocks: by the token
counter, the digest of the speaker and message, and the part of it shown. A long session's
messages are offered to block after block; rendering a line (escaping it) only to count it,
for every message offered, was most of a block's work. Only digests and numbers are kept,
no memory text."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable

from runtime_svc.domain.message_parts import Part

COSTS_CACHED = 65_536
_costs: dict[tuple[object, bytes, int, int], int] = {}
_lock = threading.Lock()


def digest(speaker: str, content: str) -> bytes:
    return hashlib.blake2b(f"{speaker}\0{content}".encode(), digest_size=16).digest()


def line_cost(
    count: Callable[[str], int], key: bytes, part: Part | None, render: Callable[[], str]
) -> int:
    """The cost of the line `render` writes (a message by its `digest`, shown as `part`),
    counted by `count`, rendered only when not known."""
    at = (count, key, part.start if part else -1, part.end if part else -1)
    found = _costs.get(at)
    if found is None:
        found = count(render())
        with _lock:
            _costs[at] = found
            while len(_costs) > COSTS_CACHED:
                del _costs[next(iter(_costs))]
    return found
