"""Whether a text carries an answer's words: what reaches the model, not only what is cited.

A question's answer is one or more items (LoCoMo: the answer; BEAM: each rubric item, the
part after "LLM response should state:" and the like, without the items that judge the
reply's conduct rather than what it recalls, such as "there is contradictory information").

- An item's key words: its words (NFKC, lower case; runs of letters, runs of digits, so
  "250ms" is "250" and "ms"; "1,200" is "1200"; "0.6.2" stays one; number words zero to
  twenty as digits; month names and their abbreviations as the full name), stop words left
  out (`STOP_WORDS`: function words, "yes", "till" and the verbs a rubric reports with, such
  as "said" or "mentioned"), Porter stems, each once.
- A text carries an item when it holds at least three quarters of the item's key words
  (rounded up: every key word of an item of up to three).
- A text carries an answer when it carries every item. An answer without a key word
  (a bare "yes", "no", "none") is skipped: `carries` returns None and it is counted apart.

The words are looked for anywhere in the text, not together: a single digit or a common
word is found in most blocks of 2,000 tokens, and an answer the model has to work out
(a count or a number of days across two dates) is carried only when some message says it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

import Stemmer

_STEMMER = Stemmer.Stemmer("porter")

_STOP_WORDS = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom whose why will with would you your yours yourself
    yourselves yes none s t d ll m ve re till
    said say says mentioned mention mentions suggested suggest recommended recommend noted told
    stated asked
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
_NUMBER_WORDS = """zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
_MONTH_NAMES = """january february march april may june july august september october november
december"""
_NUMBERS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS.split())}
_MONTHS = {m[:3]: m for m in _MONTH_NAMES.split()} | {"sept": "september"}
_WORD = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_RUBRIC = re.compile(r"^\s*llm response should (?:state|mention|contain|include)\s*:\s*", re.I)
# Rubric items that judge the reply's conduct, not what it recalls (BEAM's contradiction
# questions carry both in every rubric).
CONDUCT = frozenset({"there is contradictory information", "which statement is correct"})
SHARE = 0.75


def words(text: str) -> list[str]:
    """The text's words, normalised as the module doc says (stop words kept, not stemmed)."""
    text = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower())
    out = []
    for w in _WORD.findall(text):
        w = _NUMBERS.get(w, w)
        out.append(_MONTHS.get(w, w))
    return out


def stems(text: str) -> set[str]:
    """Every word's stem (what a text is searched for key words in)."""
    return {_STEMMER.stemWord(w) for w in words(text)}


def key_words(item: str) -> list[str]:
    """An item's key words: stems of its words that are not stop words, each once, in order."""
    out: list[str] = []
    for w in words(item):
        if w in STOP_WORDS:
            continue
        s = _STEMMER.stemWord(w)
        if s not in out:
            out.append(s)
    return out


def rubric_items(rubric: Iterable[str]) -> list[str]:
    """A BEAM rubric's items as answer items: the statement after "LLM response should
    state:" (or mention, contain, include), the conduct items left out."""
    out = []
    for raw in rubric:
        item = _RUBRIC.sub("", str(raw)).strip()
        if item and item.lower().rstrip("?.! ") not in CONDUCT:
            out.append(item)
    return out


def carries(text: str | set[str], items: Sequence[str], share: float = SHARE) -> bool | None:
    """Whether `text` (or its `stems`) carries every item's key words (see the module doc);
    None when no item has a key word (the answer is skipped and counted apart)."""
    keys = [k for k in (key_words(i) for i in items) if k]
    if not keys:
        return None
    present = stems(text) if isinstance(text, str) else text
    return all(sum(k in present for k in ks) >= math.ceil(share * len(ks) - 1e-9) for ks in keys)
