"""Which passage of a ranked conversation an explanation names: the one search returns for
it (`Hit.passage`: a message with the one before it as context), narrowed to a part when the
message of it that shares the most of the query's words is longer than a prompt shows whole
(`assembly.best_part`: the part a prompt block would show of it). Ranges only: an
explanation carries no memory text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from runtime_svc import assembly, retrieval
from runtime_svc.domain.passages import Part, Range
from runtime_svc.domain.sources import Body


@dataclass(frozen=True)
class Matched:
    passage: Range
    part: Part | None  # of the one message `passage` then spans


def matched(hit: retrieval.Hit, stems: Sequence[str]) -> Matched | None:
    """The passage of a hit (None: a plain-text memory, which is one passage)."""
    rng = hit.passage
    if rng is None:
        return None
    lines = hit.decoded[0] if hit.decoded is not None else Body.decoded(hit.raw)[0]
    inside = range(rng.start, min(rng.end, len(lines) - 1) + 1)
    # The message sharing the most of the query's words; of equals the later (a passage is
    # a message with its context before it).
    best = max(inside, key=lambda i: (assembly.shared(lines[i][1], stems), i), default=None)
    if best is None:
        return Matched(rng, None)
    part = assembly.best_part(lines[best][1], stems)
    return Matched(Range(best, best), part) if part is not None else Matched(rng, None)


def located(
    entries: Sequence[retrieval.Entry], hits: Iterable[retrieval.Hit], stems: Sequence[str]
) -> list[retrieval.Entry]:
    """The entries, each ranked one whose hit is among `hits` (same source and revision)
    with its passage; the others as they are."""
    by_source: dict[str, retrieval.Hit] = {}
    for h in hits:
        by_source.setdefault(h.source_id, h)
    out = []
    for e in entries:
        hit = by_source.get(e.source_id)
        found = matched(hit, stems) if e.rank and hit and hit.revision == e.revision else None
        out.append(replace(e, passage=found.passage, part=found.part) if found else e)
    return out
