"""Text analysis for retrieval: the same words, stop words and stems on every path.

Words are runs of letters and digits after Unicode normalisation (diacritics removed,
lower case), so punctuation never matters. Stems are Porter stems, the same algorithm the
SQLite FTS5 `porter` tokenizer applies when it indexes, so statistics looked up by stem
refer to what the index holds.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from runtime_svc.domain import digest_cache

_WORD = re.compile(r"[^\W_]+")
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)
# No cache of its own (`stem` keeps one, which an erasure empties: `digest_cache.forget_all`).
_STEMMER = Stemmer.Stemmer("porter", 0)

# Function words and question words that carry no topic: dropped from queries.
_STOP_WORDS = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each else ever few for from further get gets got had hadn has hasn have
    haven having he her here hers herself him himself his how i if in into is isn it its itself
    just let like ll me might more most much must mustn my myself no nor not now of off on once
    one only or other ought our ours ourselves out over own re same say says shall shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through to too under until up upon us ve very was wasn we were weren what when
    where which while who whom whose why will with won would wouldn yet you your yours yourself
    yourselves s t d m o y ever anything something thing things kind sort tell told know knows
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


def normalise(text: str) -> str:
    if text.isascii():  # nothing to decompose, no diacritics
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(normalise(text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


@lru_cache(maxsize=65536)
def token_stems(token: str) -> tuple[str, ...]:
    """The stems of a whitespace-separated token's words (snippets look them up token by
    token; tokens repeat across memories, so this is cached as `stem` is)."""
    return tuple(stem(w) for w in words(token))


# Both are keyed by words of memories' texts: an erasure empties them.
digest_cache.register(stem.cache_clear)
digest_cache.register(token_stems.cache_clear)


@dataclass(frozen=True)
class Term:
    word: str  # as the index tokenizer will see it (it stems it again itself)
    stem: str


def query_terms(query: str) -> list[Term]:
    """Distinct content words of a query, in order of first appearance, one per stem."""
    seen: set[str] = set()
    out = []
    for w in words(query):
        if w in STOP_WORDS:
            continue
        s = stem(w)
        if s and s not in seen:
            seen.add(s)
            out.append(Term(w, s))
    return out


def count_tokens(text: str) -> int:
    """Prompt tokens as agentmem counts them: words and punctuation marks."""
    return len(_TOKEN.findall(text))
