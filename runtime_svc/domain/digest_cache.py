"""What is worked out from a memory's text once and reused by later queries, remembered by
the text's digest: a bounded map shared by the runtime's threads, oldest out first. Only
digests and what was worked out are kept, never memory text."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def text_digest(*texts: str) -> bytes:
    """One digest of the texts together (joined by NUL, which no part may hold unseen)."""
    return hashlib.blake2b("\0".join(texts).encode(), digest_size=16).digest()


class DigestCache(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._found: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for `key`, else what `make` returns (then kept)."""
        found = self._found.get(key)
        if found is None:
            found = make()
            with self._lock:  # trimming must not race another thread's trimming
                self._found[key] = found
                while len(self._found) > self.size:
                    del self._found[next(iter(self._found))]
        return found
