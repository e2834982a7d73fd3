"""Whether a fact's value is only a fragment of one, and so no value at all.

A value read from a sentence is a fragment when it is: a dangling abbreviation ("Dr" of
"Dr. Hansen", "e.g."), a label without what it labels ("fix:" of "commits like feat: or
fix:"), punctuation only (":)"), stop words only ("the"), or code only (`` `x = f(y)` ``,
or a code span cut open). Such a fact is not stored (`extraction`) and answers nothing
(`questions`).
"""

from __future__ import annotations

import re

from runtime_svc.domain.text import STOP_WORDS

# Abbreviations that stand before what they abbreviate about: a title before a name, "e.g."
# before examples. As a value's last word, what they announce was cut off.
DANGLING = frozenset(
    {"dr", "mr", "mrs", "ms", "mx", "prof", "sr", "jr", "st", "mt", "fr", "rev", "capt"}
    | {"lt", "sgt", "vs", "cf", "e.g", "i.e", "viz"}
)
_CODE_SPAN = re.compile(r"`[^`]*`")
_WORD = re.compile(r"\w+")


def is_fragment(value: str) -> bool:
    words = value.split()
    if not words or not _WORD.search(value):
        return True
    if value.count("`") % 2 or not _WORD.search(_CODE_SPAN.sub(" ", value)):
        return True  # a code span cut open, or code only
    last = words[-1]
    if last.endswith(":") or last.rstrip(".").lower() in DANGLING:
        return True
    return all(w.lower() in STOP_WORDS for w in _WORD.findall(value))
