"""A sentence-transformers model on this machine (`retrieval.embeddings: local`; the
`embeddings` extra). The model is a name (fetched once into the Hugging Face cache) or a
local directory; with HF_HUB_OFFLINE=1 nothing is fetched. Loaded once per process and
model: loading takes seconds, and runtimes in one process share it. Texts (a search's
query, the indexer's batches) are embedded through ONNX Runtime when the same weights
exported there give the same vectors (`onnx_query`): a query on one thread, about twice as
fast; a batch on every core, sorted by length into groups padded to their own length;
otherwise through sentence-transformers on torch."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from runtime_svc.retrieval.embedders.model import Vector

if TYPE_CHECKING:
    from runtime_svc.retrieval.embedders.onnx_query import QueryEncoder


class LocalEmbedder:
    def __init__(self, model: str, model_id: str, int8_batches: bool = True) -> None:
        """`int8_batches`: batches (the indexer's) run the model's int8 copy
        (`retrieval.embedders.onnx_int8`; retrieval.index_precision)."""
        self.model_id = model_id
        self._model, self._query = _load(model, int8_batches)
        self._dimension = int(_dimension_of(self._model))
        # torch runs one forward pass at a time well; callers from several threads (and
        # runtimes sharing the model in one process) queue.
        self._lock = _lock(model)

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if self._query is not None:  # on the caller's thread, beside any other call
            if len(texts) == 1:
                return [self._query(texts[0]).tolist()]
            return [v.tolist() for v in self._query.batch(texts)] if texts else []
        with self._lock, _one_thread(len(texts) == 1):
            vectors = self._model.encode(
                list(texts),
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [v.tolist() for v in vectors]


@contextlib.contextmanager
def _one_thread(single: bool) -> Iterator[None]:
    """One short text (a query) is embedded on one thread: splitting so little work between
    threads costs more than it saves (docs/benchmarks.md, design measurements), and leaves
    the other core to the database. Batches keep torch's threads. Callers hold the model's
    lock, so no other forward pass runs meanwhile."""
    if not single:
        yield
        return
    import torch

    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(_default_threads())


@functools.cache
def _lock(model: str) -> threading.Lock:
    return threading.Lock()


@functools.cache
def _default_threads() -> int:
    """Torch's own thread count (read once, before any call changed it)."""
    import torch

    return int(torch.get_num_threads())


@functools.cache
def _load(model: str, int8_batches: bool) -> tuple[Any, QueryEncoder | None]:
    # OpenMP threads that spin while waiting for work take the CPU from the database
    # threads beside them (and from other processes), many times over on 2 cores
    # (docs/benchmarks.md, design measurements). Passive waiting must be chosen before
    # torch loads OpenMP.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    _quiet_loading()
    from sentence_transformers import SentenceTransformer  # the `embeddings` extra

    from runtime_svc.retrieval.embedders import onnx_query

    loaded = SentenceTransformer(model, device="cpu")
    _default_threads()
    return loaded, onnx_query.load(loaded, int8_batches)


def _quiet_loading() -> None:
    """The model libraries draw progress bars and advisories on stderr while loading: a
    service's terminal is for its banner, warnings and errors (the log says which model
    was loaded)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from huggingface_hub.utils.tqdm import disable_progress_bars
    from transformers.utils import logging as transformers_logging

    disable_progress_bars()
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


def _dimension_of(model: Any) -> int:
    """The model's output size (sentence-transformers renamed the getter in version 6)."""
    getter = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    return int(getter())
