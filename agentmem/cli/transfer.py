"""`agentmem import` and `agentmem export`: memories as JSON Lines, in and out."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agentmem.cli import import_lines, jsonl
from agentmem.cli.client import fail
from agentmem.cli.import_lines import Outcome, Placed
from agentmem.client import Client
from agentmem.client.errors import ApiError
from agentmem.process import private_files
from agentmem.v1 import sources_pb2


def import_(client: Client, args: argparse.Namespace) -> int:
    """Each line is recognised where the server already holds it (`import_lines`), so
    importing an export again, into the server it came from or another, stores nothing
    twice. A refused line stops the import (lines already in flight finish) unless
    `--keep-going`; either way it ends with the counts, and exits 1 when a line was refused
    or the import stopped. A line imported before whose memory was since revoked, erased or
    rejected is refused too, never brought back, without stopping the import."""
    from tqdm import tqdm

    lines, bad = _read(Path(args.file))
    for line_error in bad:
        print(f"agentmem: {args.file}: {line_error}", file=sys.stderr)
    todo = [line for line in lines if not line.skip_status]
    tally = Tally(skipped=len(lines) - len(todo), bad=len(bad))
    if bad and args.on_bad_line == "stop":
        tally.not_tried = len(todo)
        _report(tally, args)
        return fail(
            f"{len(bad)} bad line(s); nothing imported (--on-bad-line skip imports the rest)"
        )
    placer = import_lines.Placer(client, import_lines.present_sources(client, todo))
    with tqdm(total=len(todo), unit="memory", file=sys.stderr, mininterval=0.2) as bar:
        _place_all(placer, todo, args, tally, bar.update)
    return _report(tally, args)


@dataclass
class Tally:
    """What an import did, line by line; `refused` includes the lines not restored."""

    skipped: int = 0  # pending or rejected in the file: not imported
    bad: int = 0
    counts: Counter[Outcome] = field(default_factory=Counter)
    refusals: list[Placed] = field(default_factory=list)
    not_restored: Counter[str] = field(default_factory=Counter)  # by state
    not_tried: int = 0
    failed: int = 0  # lines whose call failed for a reason not about them (it stopped)
    stopped: str = ""  # why the import stopped before the end ("" if it did not)

    def add(self, placed: Placed) -> None:
        self.counts[placed.outcome] += 1
        if placed.outcome is Outcome.REFUSED:
            self.refusals.append(placed)
        elif placed.outcome is Outcome.ENDED:
            self.not_restored[placed.reason] += 1

    @property
    def refused(self) -> int:
        return self.counts[Outcome.REFUSED] + self.counts[Outcome.ENDED]


def _place_all(
    placer: import_lines.Placer,
    todo: list[jsonl.Line],
    args: argparse.Namespace,
    tally: Tally,
    progress: Callable[[int], object],
) -> None:
    """Places the lines in order, `--in-flight` at a time. A refused line (without
    `--keep-going`) or an error that is not about a line stops the submitting; what is in
    flight then finishes and is counted."""
    in_flight = max(1, args.in_flight)
    pending: deque[Future[Placed]] = deque()
    lines = iter(todo)
    with ThreadPoolExecutor(in_flight) as pool:
        while True:
            while not tally.stopped and len(pending) < in_flight:
                line = next(lines, None)
                if line is None:
                    break
                pending.append(pool.submit(placer.place, line))
            if not pending:
                break
            try:
                placed = pending.popleft().result()
            except ApiError as e:
                tally.failed += 1
                tally.stopped = tally.stopped or f"stopped: {e.explain()}"
                continue
            tally.add(placed)
            progress(1)
            if placed.outcome is not Outcome.REFUSED:
                continue
            print(f"agentmem: line {placed.line} refused: {placed.message}", file=sys.stderr)
            if not (args.keep_going or tally.stopped):
                tally.stopped = (
                    f"stopped at line {placed.line}, refused "
                    "(--keep-going imports past refused lines)"
                )
    tally.not_tried = len(todo) - sum(tally.counts.values()) - tally.failed


def _report(tally: Tally, args: argparse.Namespace) -> int:
    """The counts (always; as numbers with --json), then why it stopped; exit code 1 when
    a line was refused, the import stopped or bad lines kept it from starting."""
    counts = tally.counts
    if args.json:
        print(
            json.dumps(
                {
                    "imported": counts[Outcome.IMPORTED],
                    "extended": counts[Outcome.EXTENDED],
                    "already_present": counts[Outcome.PRESENT],
                    "refused": tally.refused,
                    "refusals": [
                        {"line": r.line, "reason": r.reason, "message": r.message}
                        for r in tally.refusals
                    ],
                    "not_restored": dict(sorted(tally.not_restored.items())),
                    "skipped_not_active": tally.skipped,
                    "bad_lines": tally.bad,
                    "not_tried": tally.not_tried,
                    "failed": tally.failed,
                }
            )
        )
    else:
        extended = counts[Outcome.EXTENDED]
        head = f"imported {counts[Outcome.IMPORTED]}" + (
            f", extended {extended} conversation(s) with new turns" if extended else ""
        )
        notes = [
            (True, f"{head}, already present {counts[Outcome.PRESENT]}, refused {tally.refused}"),
            (tally.skipped, f"skipped {tally.skipped} not active (pending or rejected)"),
            (tally.bad, f"skipped {tally.bad} bad line(s)"),
            (tally.not_tried, f"{tally.not_tried} line(s) not tried"),
        ]
        print("; ".join(note for shown, note in notes if shown))
    if tally.not_restored:  # what an earlier import of these lines has become since
        since = ", ".join(f"{n} {state}" for state, n in sorted(tally.not_restored.items()))
        fail(f"not restored: imported before and no longer active ({since})")
    if tally.stopped:
        fail(f"{tally.stopped}; {tally.not_tried} line(s) not tried")
    return 1 if tally.refused or tally.stopped else 0


def _read(path: Path) -> tuple[list[jsonl.Line], list[jsonl.BadLine]]:
    lines: list[jsonl.Line] = []
    bad: list[jsonl.BadLine] = []
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                lines.append(jsonl.parse_line(number, jsonl.decode(number, raw)))
            except jsonl.BadLine as e:
                bad.append(e)
    return lines, bad


def export(client: Client, args: argparse.Namespace) -> int:
    """Revoked and erased memories are left out (counted apart): an export must never
    bring them back."""
    private_files.restrict_stdout()
    revoked: set[str] = set()
    erased, token = 0, ""
    while True:
        page = client.list_sources(effective_state="revoked", page_size=1000, page_token=token)
        revoked.update(s.source_id for s in page.sources)
        token = page.next_page_token
        if not token:
            break
    while True:
        memories = client.list_memories(
            status_filter="all", page_size=1000, page_token=token, timeout=60
        )
        for memory in memories.memories:
            if memory.status == sources_pb2.STATUS_ERASED:
                erased += 1
            elif memory.source_id not in revoked:
                print(jsonl.export_line(memory))
        token = memories.next_page_token
        if not token:
            break
    left_out = [f"{n} {what}" for n, what in ((len(revoked), "revoked"), (erased, "erased")) if n]
    if left_out:
        print(f"agentmem: left out {' and '.join(left_out)} memories", file=sys.stderr)
    print(f"agentmem: not carried by an export: {NOT_CARRIED}", file=sys.stderr)
    return 0


# What a round trip cannot keep; everything that decides an answer (text, observed time,
# classification, thread, labels, save intent with its source and evidence) is carried.
NOT_CARRIED = (
    "source ids and revisions (the target mints its own), the audit chain, "
    "pending and rejected review decisions, retracted facts (retract them again), "
    "thread memory modes, and save-intent trust (the importing credential's applies)"
)
