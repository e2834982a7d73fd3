"""Retrieval: everything a search needs to rank the eligible memories of a query.

The rest of the runtime enters through this module only (`tests/unit/test_layers.py`):

- the lexical side (`LexicalSearch`): BM25 over the index's postings, in its tables
  (`lexical/`) or held in memory for large tenants (`held/`, `Mirrors`);
- the semantic side and the fusion of both (`Semantic`, `HybridSettings`, `Weights`):
  vectors ranked in memory, in SQL, through a coarse pass or pgvector's HNSW index
  (`vectors/`); the embedding models (`embedders/`) and the background indexer that embeds
  what was queued (`indexer/`, `EmbeddingIndexer`);
- what a search returns (`Hit`) and how its matches are explained (`explain`, `as_prompt`,
  `snippet`).

Inside: `plan.py` chooses the rankers, `take.py` is the one loop that takes eligible
candidates best first, `source_checks.py` checks their sources in SQL. Retrieval stands on
storage (`runtime_svc.storage`: the write path keeps the postings, counts and vectors) and on
the domain's rules; the use cases (`runtime_svc.services.retrieval`) stand on it.
"""

from runtime_svc.retrieval.embedders.configured import (
    LexicalOnlyReason,
    Unavailable,
    missing_library,
    open_embedder,
)
from runtime_svc.retrieval.embedders.model import Embedder, Vector
from runtime_svc.retrieval.explanation import Entry, Match, as_prompt, explain, snippet
from runtime_svc.retrieval.fusion import Weights
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.retrieval.hits import Hit
from runtime_svc.retrieval.indexer.embedding_indexer import EmbeddingIndexer
from runtime_svc.retrieval.lexical.lexical_search import LexicalSearch
from runtime_svc.retrieval.plan import describe as describe_plan
from runtime_svc.retrieval.semantic import HybridSettings, Semantic
from runtime_svc.retrieval.vectors.vector_sql import vector_store_reason

__all__ = [
    "Embedder",
    "EmbeddingIndexer",
    "Entry",
    "Hit",
    "HybridSettings",
    "LexicalOnlyReason",
    "LexicalSearch",
    "Match",
    "Mirrors",
    "Semantic",
    "Unavailable",
    "Vector",
    "Weights",
    "as_prompt",
    "describe_plan",
    "explain",
    "missing_library",
    "open_embedder",
    "snippet",
    "vector_store_reason",
]
