"""What is worked out from a memory's text once and reused by later queries, remembered by
the text's digest: a bounded map shared by the runtime's threads, oldest out first. Only
digests and what was worked out are kept, never memory text.

A digest is still a hash of the text, and no hash of erased content is kept: an erasure
empties every such cache of the process (`forget_all`; other processes do at their next
look at the erasures, within a minute), along with the caches registered here that hold
words (`register`)."""

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


_CLEARS: list[Callable[[], None]] = []


def register(clear: Callable[[], None]) -> None:
    """`clear` empties a cache of what memories' texts hold; `forget_all` calls it."""
    _CLEARS.append(clear)


def forget_all() -> None:
    """Every cache of what memories' texts hold emptied (a source was erased)."""
    for clear in _CLEARS:
        clear()


class DigestCache(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._found: dict[K, V] = {}
        self._lock = threading.Lock()
        register(self.clear)

    def clear(self) -> None:
        with self._lock:
            self._found = {}

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
