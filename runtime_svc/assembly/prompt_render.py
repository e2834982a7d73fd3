"""The prompt block's text: its delimiters, numbered source lines and message lines.

Only this module writes the block's structure. What a memory says is data inside it:
`escape` makes sure no memory text, speaker name or date can produce a delimiter, a tag, a
numbered line or a line of its own (`docs/prompt-assembly.md`, "Memory text cannot take
over the block"):

- every run of whitespace (line breaks of any kind included) becomes one space, so a memory
  never starts a line: numbered lines, "…" lines and the closing delimiter are the
  renderer's alone;
- `&`, `<` and `>` are written `&amp;`, `&lt;`, `&gt;` (the block is XML-like: a memory
  cannot close `<memories>` or open `<system>`), and a citation marker such as `[7]` inside
  text is written `&#91;7]`, so no number in the text looks like one of the block's;
- characters a person cannot see (zero-width, bidirectional controls, tag characters:
  `agentmem.contract.invisible`) are shown as `U+XXXX`.

`escape` is reversible: `unescape(escape(x)) == x` for any text without those characters
and whitespace runs (the property tests check it with random Unicode).
"""

from __future__ import annotations

import re

from agentmem.contract.invisible import shown

HEADER = "<memories>\nWhat you remember about the user, numbered by source.\n"
FOOTER = "</memories>"
GAP = "…\n"

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
# `[` only where it opens a citation marker: "[7]", "[ 12 ]" (digits, maybe spaced).
_MARKER = re.compile(r"\[(?=\s*\d+\s*\])")
_ENTITY = re.compile("|".join(re.escape(e) for e in _UNESCAPES))


def escape(text: str) -> str:
    """Text as the block may hold it: nothing in it reads as the block's own markup. (`&`
    first, so no entity written here is escaped again; replacing is several times faster
    than one pattern over a reply full of code.)"""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKER.sub("&#91;", text) if "[" in text else text


def unescape(text: str) -> str:
    """The inverse of `escape`."""
    return _ENTITY.sub(lambda m: _UNESCAPES[m.group()], text)


def inline(text: str) -> str:
    """A piece of memory text as one safe line fragment: invisible characters shown,
    whitespace runs as one space, markup escaped."""
    return escape(" ".join(shown(text).split()))


def message_line(
    speaker: str, content: str, *, cut_before: bool = False, cut_after: bool = False
) -> str:
    """A conversation's message: `speaker: text`; a message shown in part has "…" where it
    was cut (written here, so memory text cannot fake a cut)."""
    before = "… " if cut_before else ""
    after = " …" if cut_after else ""
    return f"{inline(speaker)}: {before}{inline(content)}{after}\n"


SUPERSEDED = "(superseded)"


def source_line(n: int, date: str = "", text: str = "", *, superseded: bool = False) -> str:
    """A source's numbered line: `[n]`, the date it was said, `(superseded)` when a later
    memory replaced what it says, and (a plain-text memory) its text."""
    parts = [f"[{n}]", inline(date), SUPERSEDED if superseded else "", inline(text)]
    return " ".join(p for p in parts if p) + "\n"
