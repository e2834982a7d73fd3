"""A repeated query is embedded once: the runtime keeps query vectors (bounded, least
recently used first out), keyed by model and text."""

from __future__ import annotations

from runtime_svc.retrieval import fusion
from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder
from runtime_svc.retrieval.semantic import HybridSettings, Semantic
from tests.hybrid_support import MODEL_ID


class CountingEmbedder(LocalEmbedder):
    """The local model, counting the texts it is asked to embed."""

    def __init__(self, path: str) -> None:
        super().__init__(path, MODEL_ID)
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed(texts)


def test_a_repeated_query_does_not_run_the_model_again(local_model):
    embedder = CountingEmbedder(local_model)
    settings = HybridSettings(fusion.Weights(0.4, 0.6), 50, 2000, 0.2, 0)
    semantic = Semantic(embedder, settings, query_cache=2)
    try:
        first = semantic.embed("where does Ann paddle her kayak", "t1").result()
        again = semantic.embed("where does Ann paddle her kayak", "t2").result()
        assert again == first
        assert embedder.texts == ["where does Ann paddle her kayak"]
        semantic.embed("the lake", "t1").result()
        semantic.embed("the fair", "t1").result()  # the cache holds two: the first goes
        semantic.embed("where does Ann paddle her kayak", "t1").result()
        assert len(embedder.texts) == 4
        semantic.embed("the fair", "t1").result()
        assert len(embedder.texts) == 4
    finally:
        semantic.close()
