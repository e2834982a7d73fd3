"""A query as every step of a request reads it, analysed once: its words for lexical ranking,
fusion's coverage and snippets, their stems for the explanation and the prompt block, and
its text for what is found by other means (the speaker a question names, its embedding).

The use case makes one `Query` per request (`Query.of`) and passes it on; nothing after it
splits or stems the query text again."""

from __future__ import annotations

from dataclasses import dataclass

from runtime_svc.domain.text import Term, query_terms


@dataclass(frozen=True)
class Query:
    text: str
    # Distinct content words, in order of first appearance, one per stem (`text.query_terms`).
    terms: tuple[Term, ...]
    stems: tuple[str, ...]  # the terms' stems, in the same order

    @classmethod
    def of(cls, text: str) -> Query:
        terms = tuple(query_terms(text))
        return cls(text, terms, tuple(t.stem for t in terms))
