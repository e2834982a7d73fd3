"""What the retrieval use cases return (`runtime_svc.services.retrieval`)."""

from __future__ import annotations

from dataclasses import dataclass

from runtime_svc.assembly import PromptBlock
from runtime_svc.domain.passages import Range
from runtime_svc.retrieval import Entry


@dataclass(frozen=True)
class Found:
    source_id: str
    revision: int
    score: float
    snippet: str
    passage: Range | None = None


@dataclass(frozen=True)
class Explanation:
    entries: list[Entry]
    total_matches: int
    truncated: bool


@dataclass(frozen=True)
class RetrievalStatus:
    mode: str  # lexical | hybrid
    lexical_only_reason: str  # retrieval.LexicalOnlyReason, or "" (hybrid)
    model_id: str
    dimension: int
    pending: int  # the caller's sources waiting to be embedded
    tokenizer: str = "words"  # the prompt budget's unit
    lag_s: float = 0.0  # how long the oldest of them has waited
    set_aside: int = 0  # of them, set aside after repeated failures
    last_error: str = ""  # the latest failure to embed one of them (an exception's type)
    last_error_at_us: int = 0


@dataclass(frozen=True)
class Assembled:
    block: PromptBlock
    prompt_record_id: str
