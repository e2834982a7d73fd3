"""The parts of a long message: what a prompt shows of a reply that runs to thousands of
characters.

A message longer than `PART_CHARS` is cut into parts at paragraph and code-block boundaries
(a fenced code block is never cut unless it alone is over the limit; then, like a paragraph
over the limit, it is cut between lines, and a line over it between characters), and
consecutive blocks are joined while they fit. Each part is named by its character range in
the message. `best_part` picks the part that shares the most of a query's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from runtime_svc.assembly.stem_places import Places
from runtime_svc.domain import text
from runtime_svc.domain.digest_cache import DigestCache, text_digest
from runtime_svc.domain.passages import Part

PART_CHARS = 1_200
_FENCE = re.compile(r"\s*(```|~~~)")


def _lines(content: str) -> Iterable[tuple[int, int]]:
    start = 0
    for line in content.splitlines(keepends=True):
        yield start, start + len(line)
        start += len(line)


def blocks(content: str) -> list[Part]:
    """Paragraphs (runs of non-blank lines) and fenced code blocks, in order."""
    out: list[Part] = []
    start: int | None = None
    fenced = False
    for a, b in _lines(content):
        line = content[a:b]
        if fenced:
            if _FENCE.match(line):
                fenced = False
                out.append(Part(start if start is not None else a, b))
                start = None
            continue
        if _FENCE.match(line):
            if start is not None:
                out.append(Part(start, a))
            start, fenced = a, True
        elif not line.strip():
            if start is not None:
                out.append(Part(start, a))
                start = None
        elif start is None:
            start = a
    if start is not None:
        out.append(Part(start, len(content)))
    return out


def _cut(content: str, p: Part, limit: int) -> list[Part]:
    """A block over the limit, cut between lines (a line over it between characters)."""
    out: list[Part] = []
    start = p.start
    for a, b in _lines(content[p.start : p.end]):
        a, b = a + p.start, b + p.start
        if b - start > limit and a > start:
            out.append(Part(start, a))
            start = a
        while b - start > limit:
            out.append(Part(start, start + limit))
            start += limit
    if start < p.end:
        out.append(Part(start, p.end))
    return out


def parts(content: str, limit: int = PART_CHARS, key: bytes = b"") -> tuple[Part, ...]:
    """The message's parts (one, the whole message, when it fits the limit); `key`: a digest
    of the message already made (`text_digest` of it, or of it with its speaker)."""
    if len(content) <= limit:
        return (Part(0, len(content)),)
    at = (key or text_digest(content), limit)
    return _parts.get(at, lambda: _cut_parts(content, limit))


# Long messages' parts, by the message's digest (character ranges only: no text is kept).
_parts: DigestCache[tuple[bytes, int], tuple[Part, ...]] = DigestCache(4096)


def _cut_parts(content: str, limit: int) -> tuple[Part, ...]:
    pieces: list[Part] = []
    for b in blocks(content):
        pieces += _cut(content, b, limit) if b.end - b.start > limit else [b]
    out: list[Part] = []
    for p in pieces:
        if out and p.end - out[-1].start <= limit:
            out[-1] = Part(out[-1].start, p.end)
        else:
            out.append(p)
    return tuple(out) or (Part(0, min(len(content), limit)),)


def best_part(
    content: str,
    stems: Sequence[str],
    limit: int = PART_CHARS,
    places: Places | None = None,
    key: bytes = b"",
) -> Part | None:
    """The part of a long message that shares the most of the query's stems (the first of
    equals); None when the message fits the limit whole. `places`: where the stems occur in
    the message, when known (for an ASCII message, whose normalised form has its offsets);
    `key`: as for `parts`."""
    found = parts(content, limit, key)
    if len(found) == 1 and found[0] == Part(0, len(content)):
        return None
    if places is not None:
        return found[places.best([(p.start, p.end) for p in found])]
    return max(found, key=lambda p: shared(content[p.start : p.end], stems))


def shared(piece: str, stems: Sequence[str]) -> int:
    """How many of the query's stems a text holds (a stem is how its words begin, mostly:
    looking for it in the text is much cheaper than stemming every word of a reply of
    thousands of characters; a stem under four letters must begin a word)."""
    if not stems:
        return 0
    return held(text.normalise(piece), set(stems))


def holds_any(normalised: str, stems: Iterable[str]) -> bool:
    """Whether a text already normalised holds one of the stems (`held` > 0, stopping at
    the first)."""
    return any(_holds(normalised, stem) for stem in stems)


def held(normalised: str, stems: Iterable[str]) -> int:
    """`shared` of a text already normalised (`text.normalise`), the stems distinct."""
    return sum(1 for stem in stems if _holds(normalised, stem))


def _holds(found: str, stem: str) -> bool:
    """Whether a (normalised) text holds a stem: anywhere when it is four letters or more,
    else at the start of a word."""
    at = found.find(stem)
    if len(stem) >= 4:
        return at >= 0
    while at >= 0:
        if at == 0 or not found[at - 1].isalnum():
            return True
        at = found.find(stem, at + 1)
    return False
