"""Runs of a prompt block's chosen messages: consecutive messages of a conversation shown
together, the "…" lines between them, and the citations of a run (its whole messages
together, each message shown in part alone)."""

from __future__ import annotations

from runtime_svc.domain.passages import Part, Range


def runs(chosen: set[int]) -> list[Range]:
    runs: list[Range] = []
    for i in sorted(chosen):
        if runs and runs[-1].end == i - 1:
            runs[-1] = Range(runs[-1].start, i)
        else:
            runs.append(Range(i, i))
    return runs


def cuts(run: Range, parts: dict[int, Part]) -> list[tuple[Range, Part | None]]:
    """A run's citations: its whole messages together, each message shown in part alone."""
    out: list[tuple[Range, Part | None]] = []
    start = run.start
    for i in range(run.start, run.end + 1):
        if i in parts:
            if start < i:
                out.append((Range(start, i - 1), None))
            out.append((Range(i, i), parts[i]))
            start = i + 1
    if start <= run.end:
        out.append((Range(start, run.end), None))
    return out


def gaps(chosen: set[int]) -> int:
    """How many "…" lines the messages need: one before each run not starting at 0."""
    return sum(1 for i in chosen if i > 0 and i - 1 not in chosen)
