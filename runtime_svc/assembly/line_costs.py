"""What a message's line costs in a prompt block, remembered across blocks: by the token
counter, the digest of the speaker and message, and the part of it shown. A long session's
messages are offered to block after block; rendering a line (escaping it) only to count it,
for every message offered, was most of a block's work. Only digests and numbers are kept,
no memory text."""

from __future__ import annotations

from collections.abc import Callable

from runtime_svc.domain.digest_cache import DigestCache, text_digest
from runtime_svc.domain.passages import Part

_costs: DigestCache[tuple[object, bytes, int, int], int] = DigestCache(65_536)


def digest(speaker: str, content: str) -> bytes:
    return text_digest(speaker, content)


def line_cost(
    count: Callable[[str], int], key: bytes, part: Part | None, render: Callable[[], str]
) -> int:
    """The cost of the line `render` writes (a message by its `digest`, shown as `part`),
    counted by `count`, rendered only when not known."""
    at = (count, key, part.start if part else -1, part.end if part else -1)
    return _costs.get(at, lambda: count(render()))
