"""Sentences of a text by their character offsets, for facts (`extraction`) and answers
(`passage_answers`).

Sentence ends are found by `sentencex` (Wikimedia's segmenter: rule tables per language,
in Rust), which knows that the period of "Dr. Hansen", "Acme Inc. in Berlin", "e.g." or
"v1.2" ends nothing, and keeps a quotation, an inline `code` span and a URL whole. A line
break and a semicolon before a space also end a sentence, as the extractor has always read
them ("I live in Lisbon; my sister lives in Faro").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import sentencex

_LANGUAGE = "en"
_LINE = re.compile(r"[^\n]+")
_SEMICOLON = re.compile(r";+(?=\s)")


def spans(text: str) -> Iterator[tuple[int, int]]:
    """Each sentence's [start, end) offsets in `text`, surrounding white space left out."""
    for line in _LINE.finditer(text):
        offset = line.start()
        for piece in sentencex.segment(_LANGUAGE, line.group()):
            start = offset
            offset += len(piece)
            for part in _parts(piece):
                yield from _trimmed(text, start + part[0], start + part[1])


def _parts(piece: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _SEMICOLON.finditer(piece):
        yield start, m.end()
        start = m.end()
    yield start, len(piece)


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end
