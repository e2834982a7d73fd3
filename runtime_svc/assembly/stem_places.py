"""Where a query's stems occur in one message, found once, so that the message's parts (at
any part limit) and the message itself are each counted without looking through the text
again: `count(start, end)` is exactly `message_parts.held` of that slice of the message."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence


class Places:
    def __init__(self, normalised: str, stems: Iterable[str]) -> None:
        """`normalised`: the message as `text.normalise` writes it; `stems`: distinct."""
        self._at: list[tuple[int, list[int], list[bool]]] = []
        for stem in stems:
            found, i = [], normalised.find(stem)
            while i >= 0:
                found.append(i)
                i = normalised.find(stem, i + 1)
            if found:
                # Whether each occurrence continues a word (a stem under four letters
                # counts only at the start of one, or at the start of the slice looked at).
                inside = [i > 0 and normalised[i - 1].isalnum() for i in found]
                self._at.append((len(stem), found, inside))
        self.size = len(normalised)

    def count(self, start: int, end: int) -> int:
        """How many of the stems occur within [start, end)."""
        n = 0
        for size, found, inside in self._at:
            lo, hi = bisect_left(found, start), bisect_right(found, end - size)
            if lo >= hi:
                continue
            if size >= 4 or any(not inside[k] or found[k] == start for k in range(lo, hi)):
                n += 1
        return n

    def best(self, spans: Sequence[tuple[int, int]]) -> int:
        """Which of the spans (sorted, not overlapping) holds the most stems: the index of
        the first of equals; `count` of each, in one pass over the stems' places instead
        of one look per span and stem."""
        starts = [a for a, _ in spans]
        held: list[set[int]] = [set() for _ in spans]
        for n, (size, found, inside) in enumerate(self._at):
            for k, at in enumerate(found):
                j = bisect_right(starts, at) - 1
                if j < 0 or at + size > spans[j][1]:
                    continue
                if size >= 4 or not inside[k] or at == starts[j]:
                    held[j].add(n)
        return max(range(len(spans)), key=lambda j: len(held[j]))
