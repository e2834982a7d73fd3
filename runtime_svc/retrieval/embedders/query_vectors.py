"""Query embeddings already computed, so a repeated query skips the model: a bounded
least-recently-used map keyed by model id and the query's digest (no query text is held)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from runtime_svc.retrieval.embedders.model import Vector


class QueryVectors:
    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._held: OrderedDict[tuple[str, bytes], Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model_id: str, query: str) -> Vector | None:
        key = _key(model_id, query)
        with self._lock:
            vector = self._held.get(key)
            if vector is not None:
                self._held.move_to_end(key)
            return vector

    def put(self, model_id: str, query: str, vector: Vector) -> None:
        if self._capacity <= 0:
            return
        key = _key(model_id, query)
        with self._lock:
            self._held[key] = vector
            self._held.move_to_end(key)
            while len(self._held) > self._capacity:
                self._held.popitem(last=False)

    def __len__(self) -> int:
        return len(self._held)


def _key(model_id: str, query: str) -> tuple[str, bytes]:
    return model_id, hashlib.blake2b(query.encode(), digest_size=16).digest()
