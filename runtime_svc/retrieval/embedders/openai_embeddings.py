"""Embeddings from an OpenAI-compatible endpoint (`retrieval.embeddings: openai_compatible`:
Ollama, vLLM, OpenAI). Uses the official `openai` client (the `llm` extra). Answers are
checked: one vector per text, all of one dimension, finite; anything else is an error and
the batch is retried later."""

from __future__ import annotations

import math
from collections.abc import Sequence

from runtime_svc.retrieval.embedders.model import Vector, normalized


class EmbeddingsError(Exception):
    """The endpoint's answer cannot be used."""


class OpenAICompatibleEmbedder:
    def __init__(
        self, *, endpoint: str, model: str, model_id: str, api_key: str, timeout: float
    ) -> None:
        from openai import OpenAI  # optional dependency: `pip install agentmem-service[llm]`

        self._client = OpenAI(
            base_url=endpoint, api_key=api_key or "unused", timeout=timeout, max_retries=1
        )
        self._model = model
        self.model_id = model_id
        self._dimension = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        response = self._client.embeddings.create(model=self._model, input=list(texts))
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise EmbeddingsError("the endpoint answered a different number of vectors")
        vectors = [normalized(r.embedding) for r in rows]
        dims = {len(v) for v in vectors}
        if len(dims) != 1 or 0 in dims or not all(math.isfinite(x) for v in vectors for x in v):
            raise EmbeddingsError("the endpoint answered malformed vectors")
        dim = dims.pop()
        if self._dimension and dim != self._dimension:
            raise EmbeddingsError("the endpoint changed its vectors' dimension")
        self._dimension = dim
        return vectors
