"""Query embeddings already computed, so a repeated query skips the model: a bounded
least-recently-used map keyed by model id and query text (the text is held in memory only,
never logged or exported)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from runtime_svc.domain.embeddings import Vector


class QueryVectors:
    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._held: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, model_id: str, query: str) -> Vector | None:
        with self._lock:
            vector = self._held.get((model_id, query))
            if vector is not None:
                self._held.move_to_end((model_id, query))
            return vector

    def put(self, model_id: str, query: str, vector: Vector) -> None:
        if self._capacity <= 0:
            return
        with self._lock:
            self._held[(model_id, query)] = vector
            self._held.move_to_end((model_id, query))
            while len(self._held) > self._capacity:
                self._held.popitem(last=False)

    def __len__(self) -> int:
        return len(self._held)
