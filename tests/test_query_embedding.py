"""A search's query is embedded through ONNX Runtime with the local model's own weights: the
same vectors as the model's own pipeline gives, or not used at all. The indexer's batches run
the model's int8 copy by default (retrieval.index_precision), within cosine 0.97 of the
model's vectors or not used; with float32 they give the model's own vectors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hybrid_support import MODEL_ID, local_model  # noqa: F401  (a fixture)

TEXTS = [
    "Do you remember my saxophone from the attic?",
    "tea",
    "Priya prefers tea to coffee, and she said so twice at the café in Lisbon.",
    "word " * 400,  # beyond the model's window: truncated the same way
]


def own_pipeline(embedder, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The model's vectors through sentence-transformers on torch."""
    return np.asarray(embedder._model.encode(texts, normalize_embeddings=True, batch_size=64))


def test_one_text_gets_the_same_vector_as_in_a_batch(local_model):  # noqa: F811
    pytest.importorskip("onnxruntime")
    from runtime_svc.retrieval.embedders import onnx_int8
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    embedder = LocalEmbedder(local_model, MODEL_ID)
    assert embedder._query is not None  # the ONNX encoder is in use
    batch = np.array(embedder.embed(TEXTS))  # several texts: padded together
    one = np.array([embedder.embed([t])[0] for t in TEXTS])
    assert np.allclose(np.linalg.norm(one, axis=1), 1.0, atol=1e-5)
    assert (own_pipeline(embedder, TEXTS) * one).sum(axis=1).min() > 0.9999  # a query's
    int8 = (own_pipeline(embedder, TEXTS) * batch).sum(axis=1)
    assert int8.min() > onnx_int8.MIN_COSINE and int8.min() < 0.9999  # the int8 copy's
    exact = LocalEmbedder(local_model, MODEL_ID, int8_batches=False)
    float32 = np.array(exact.embed(TEXTS))
    assert (own_pipeline(exact, TEXTS) * float32).sum(axis=1).min() > 0.9999


def test_a_batch_keeps_its_order_through_sorting_and_repeated_texts(local_model):  # noqa: F811
    pytest.importorskip("onnxruntime")
    from runtime_svc.retrieval.embedders import onnx_query
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    # float32: the model's own vectors, so that a row out of place shows (these texts are
    # as alike as texts get)
    embedder = LocalEmbedder(local_model, MODEL_ID, int8_batches=False)
    # Longest first, a text twice, more texts than one forward pass takes.
    texts = [("word " * n).strip() + f" {n}" for n in range(40, 0, -1)] + [TEXTS[2], TEXTS[2]]
    assert len(texts) > onnx_query.BATCH
    got = np.array(embedder.embed(texts))
    assert got.shape == (len(texts), embedder.dimension)
    assert (own_pipeline(embedder, texts) * got).sum(axis=1).min() > 0.9999


def test_an_encoder_that_differs_from_the_model_is_not_used(local_model, monkeypatch):  # noqa: F811
    pytest.importorskip("onnxruntime")
    from runtime_svc.retrieval.embedders import onnx_query
    from runtime_svc.retrieval.embedders.local_embeddings import _load

    model, _ = _load(local_model, True)
    monkeypatch.setattr(onnx_query, "MIN_COSINE", 1.5)  # no encoder can be that close
    assert onnx_query.load(model) is None


def test_the_indexers_batches_use_the_cores_the_container_allows(monkeypatch):
    """A CPU quota of one core (a container's cgroup limit) is one batch thread, whatever
    cores the node has and the process's affinity allows."""
    pytest.importorskip("onnxruntime")
    from joblib.externals.loky.backend import context

    from runtime_svc.retrieval.embedders import onnx_query

    monkeypatch.setattr(context, "_cpu_count_cgroup", lambda os_cpu_count: 1)
    assert onnx_query._cores() == 1


def test_an_int8_copy_that_differs_from_the_model_is_not_used(local_model, monkeypatch):  # noqa: F811
    """The batches then run the float32 model: the model's own vectors."""
    pytest.importorskip("onnxruntime")
    from runtime_svc.retrieval.embedders import onnx_int8, onnx_query
    from runtime_svc.retrieval.embedders.local_embeddings import _load

    model, _ = _load(local_model, True)
    monkeypatch.setattr(onnx_int8, "MIN_COSINE", 1.5)  # no copy can be that close
    encoder = onnx_query.load(model)
    assert encoder is not None
    expected = model.encode(TEXTS, normalize_embeddings=True)
    assert (expected * encoder.batch(TEXTS)).sum(axis=1).min() > onnx_query.MIN_COSINE
