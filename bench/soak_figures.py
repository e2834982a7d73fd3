"""The figures every soak mode prints, in one shape, so that its modes and backends compare:
writes acknowledged per second, a write's latency, the meaning lag, the embedding queue's
drain after the load, and the calls that ended in an error."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from bench.soak_checks import percentile
from bench.soak_meaning import Drain, MeaningLags

# Refusals the load provokes on purpose (compare-and-swap races): not errors.
EXPECTED = ("FAILED_PRECONDITION/REVISION_MISMATCH",)


@dataclass
class Figures:
    mode: str  # "mixed" or "append"
    backend: str  # "SQLite", "PostgreSQL", "PostgreSQL + pgvector"
    retrieval: str  # "hybrid", or "lexical (why)"
    clients: int
    seconds: float
    writes: str  # what a write is: "inserts", "appends"
    acknowledged: int
    latencies: list[float]  # seconds, acknowledged writes
    codes: Counter[str]  # "op CODE[/REASON]" -> calls
    meaning: MeaningLags | None = None  # None: lexical only
    drain: Drain | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.acknowledged / self.seconds if self.seconds else 0.0

    @property
    def errors(self) -> int:
        return sum(
            n
            for key, n in self.codes.items()
            if not key.endswith(" OK") and key.split(" ", 1)[1] not in EXPECTED
        )


def _ms(values: list[float], q: float) -> str:
    v = percentile(values, q)
    return "n/a" if math.isnan(v) else f"{v * 1000:.1f}"


def _s(values: list[float], q: float) -> str:
    v = percentile(values, q)
    return "n/a" if math.isnan(v) else f"{v:.1f}"


def meaning_line(m: MeaningLags | None) -> str:
    if m is None:
        return "n/a (lexical)"
    extra = f", {len(m.missing)} not found" if m.missing else ""
    extra += f", {m.too_soon} found too soon for the indexer" if m.too_soon else ""
    return f"{_s(m.lags, 50)} / {_s(m.lags, 99)} s ({len(m.lags)} probes{extra})"


def drain_line(d: Drain | None) -> str:
    if d is None:
        return "n/a (lexical)"
    if d.seconds is None:
        return f"no ({d.pending} still waiting)"
    return f"yes, {d.seconds:.1f} s after the load"


def lines(f: Figures) -> list[str]:
    """The figures as the soak prints them."""
    unexpected = Counter(
        {
            k: n
            for k, n in f.codes.items()
            if not k.endswith(" OK") and k.split(" ", 1)[1] not in EXPECTED
        }
    )
    return [
        f"{f.mode} soak, {f.backend}, {f.retrieval}: {f.clients} clients x {f.seconds:.0f} s",
        f"  {f.writes} acknowledged: {f.acknowledged} ({f.rate:.1f}/s)",
        f"  {f.writes[:-1]} latency p50 / p99: {_ms(f.latencies, 50)} / {_ms(f.latencies, 99)} ms",
        f"  meaning lag p50 / p99 (acknowledged -> found by meaning): {meaning_line(f.meaning)}",
        f"  outbox drained: {drain_line(f.drain)}",
        f"  errors: {f.errors}"
        + (
            " (" + ", ".join(f"{k} {n}" for k, n in unexpected.most_common()) + ")"
            if unexpected
            else ""
        ),
    ]


def table(figures: list[Figures]) -> list[str]:
    """One row per run, as docs/benchmarks.md shows them."""
    out = [
        "| run | writes acknowledged | write p50 / p99 ms | meaning lag p50 / p99 s "
        "| outbox drained after the load | errors | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        lag = "n/a" if f.meaning is None else meaning_line(f.meaning).replace(" s (", " (")
        drained = "n/a" if f.drain is None else drain_line(f.drain).removesuffix(" after the load")
        cells = [
            f"{f.mode}, {f.backend} ({f.clients} clients)",
            f"{f.acknowledged:,} {f.writes} ({f.rate:.1f}/s)",
            f"{_ms(f.latencies, 50)} / {_ms(f.latencies, 99)}",
            lag,
            drained,
            str(f.errors),
            "PASS" if not f.failures else "FAIL",
        ]
        out.append("| " + " | ".join(cells) + " |")
    return out
