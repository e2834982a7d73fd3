"""Text as an attacker disguises it, read back the way a model reads it: the forms the
instruction-like check (`instruction_like`) compares besides the text itself.

A model reads "ignore" written with Cyrillic look-alike letters (U+0456, U+043E, U+0435),
"1gn0r3", "i g n o r e" and "ig" U+FE00 "nore" as "ignore"; a pattern written for the plain
word misses each of them. So the check also sees the text
- in its compatibility form (NFKC: fullwidth and styled letters), invisible characters out;
- with every letter that Unicode's confusables list (`confusable_homoglyphs`' copy of it)
  gives a Latin or digit look-alike replaced by it;
- with digits and symbols standing for letters inside a word read as those letters, and
  runs of single letters apart ("i g n o r e", "i.g.n.o.r.e") joined.
Each is a form the check tries in turn; what is stored and shown never changes.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from agentmem.contract.invisible import without_invisible

# Digits and symbols read as letters inside a word ("1gn0r3", "pr0mpt", "@ll").
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})
_LEET_WORD = re.compile(r"\b(?=[\w@]*[a-z])(?=[\w@]*[0-9@])[a-z0-9@]{3,}\b", re.IGNORECASE)
# Four or more single letters apart, by one space, dot, dash or underscore each.
_SPACED = re.compile(r"\b(?:[a-z][ ._\-]){3,}[a-z]\b", re.IGNORECASE)
_GAPS = re.compile(r"[ ._\-]")


@cache
def _look_alikes() -> dict[int, str]:
    """Each non-ASCII character the confusables list gives one ASCII letter or digit for."""
    from confusable_homoglyphs import confusables

    table: dict[int, str] = {}
    for char, glyphs in confusables.confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        ascii_ = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()]
        alnum = [c for c in ascii_ if c.isalnum()]
        if alnum:
            table[ord(char)] = alnum[0]
    return table


def plain(text: str) -> str:
    """The compatibility form, invisible characters taken out."""
    return without_invisible(unicodedata.normalize("NFKC", without_invisible(text)))


def folded(text: str) -> str:
    """`plain`, with look-alike letters replaced by their Latin (or digit) twin."""
    p = plain(text)
    return p if p.isascii() else p.translate(_look_alikes())


def unmasked(text: str) -> str:
    """`folded`, with digits and symbols inside words read as letters and spaced-out
    letters joined."""
    f = folded(text)
    f = _LEET_WORD.sub(lambda m: m.group().translate(_LEET), f)
    return _SPACED.sub(lambda m: _GAPS.sub("", m.group()), f)


def forms(text: str) -> list[str]:
    """The forms to compare, each once: the plain text first."""
    out: list[str] = []
    for form in (plain(text), folded(text), unmasked(text)):
        if form not in out:
            out.append(form)
    return out
