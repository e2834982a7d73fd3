"""What the "Why was this retrieved?" page shows of a matched message: at most `CHARS`
characters of it (of a long message's matched part: of that part), around the first of the
query's words it holds, those words marked. Display only: which passage matched is the
service's answer (ExplainRetrieval); the words are found here by their beginnings, so
"mallets" marks "mallet" too, and a passage found by its meaning may mark none."""

from __future__ import annotations

import re

CHARS = 400
BEFORE = 100  # of `CHARS`, shown before the first word found
ELLIPSIS = "…"
MIN_WORD = 3
_WORD = re.compile(r"\w+")


def pattern(query: str) -> re.Pattern[str] | None:
    """The query's words (of `MIN_WORD` letters or more) as the beginnings of words, a
    plural's or a longer word's last letter dropped so that its other forms match too."""
    stems = {w[:-1] if len(w) > 4 else w for w in _WORD.findall(query.lower())}
    stems = {s for s in stems if len(s) >= MIN_WORD}
    if not stems:
        return None
    alternatives = "|".join(re.escape(s) for s in sorted(stems, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\w*", re.IGNORECASE)


def excerpt(text: str, words: re.Pattern[str] | None) -> tuple[tuple[str, bool], ...]:
    """`text`, or `CHARS` of it around the first word found, in pieces: each word found
    marked (True), an ellipsis where the text was cut."""
    first = words.search(text) if words is not None else None
    start = 0
    if len(text) > CHARS and first is not None:
        start = max(0, min(first.start() - BEFORE, len(text) - CHARS))
        if start:  # at a word's beginning
            space = text.find(" ", start, first.start())
            start = space + 1 if space >= 0 else first.start()
    end = min(len(text), start + CHARS)
    if end < len(text):
        space = text.rfind(" ", max(start, first.end() if first else start), end)
        end = space if space > start else end
    pieces: list[tuple[str, bool]] = [(ELLIPSIS, False)] if start else []
    at = start
    for m in words.finditer(text, start, end) if words is not None else ():
        if m.end() > end:
            break
        pieces += [(text[at : m.start()], False), (m.group(), True)]
        at = m.end()
    pieces.append((text[at:end], False))
    if end < len(text):
        pieces.append((ELLIPSIS, False))
    return tuple(p for p in pieces if p[0])
