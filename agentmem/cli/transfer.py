"""`agentmem import` and `agentmem export`: memories as JSON Lines, in and out."""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentmem.cli import jsonl
from agentmem.cli.client import fail
from agentmem.client import Client
from agentmem.client_errors import ReplayedSourceNotActive
from agentmem.contract import private_files
from agentmem.v1 import sources_pb2

COLD = sources_pb2.CLASSIFICATION_COLD


def import_(client: Client, args: argparse.Namespace) -> int:
    """Each line gets a stable request id (its own, `import-<source_id>` for an exported
    line, or one derived from the file and the line), so running the import again after an
    interruption inserts nothing twice. A line imported before whose memory was since
    revoked, erased, rejected or made cold is not brought back: it is counted by that state,
    and the import exits 1."""
    from tqdm import tqdm

    path = Path(args.file)
    salt = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    lines: list[jsonl.Line] = []
    bad: list[jsonl.BadLine] = []
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                lines.append(jsonl.parse_line(number, jsonl.decode(number, raw), salt))
            except jsonl.BadLine as e:
                bad.append(e)
    for line_error in bad:
        print(f"agentmem: {args.file}: {line_error}", file=sys.stderr)
    if bad and args.on_bad_line == "stop":
        return fail(
            f"{len(bad)} bad line(s); nothing imported (--on-bad-line skip imports the rest)"
        )
    todo = [line for line in lines if not line.skip_status]

    def one(line: jsonl.Line) -> str:
        try:
            r = client.insert_memory(**line.insert, timeout=60)
        except ReplayedSourceNotActive as e:
            # Imported before, and since changed: made cold as the line says, or no
            # longer what the line holds (revoked, erased, rejected...), never brought back.
            return "deduplicated" if e.state == "cold" and line.cold else e.state
        if line.cold:
            revision = r.revision
            if r.deduplicated:  # imported before: classify only if that did not happen
                source = client.get_source(source_id=r.source_id)
                revision = 0 if source.classification == COLD else source.revision
            if revision:
                client.set_source_classification(
                    source_id=r.source_id, classification="cold", expected_revision=revision
                )
        return "deduplicated" if r.deduplicated else "new"

    counts: dict[str, int] = {"new": 0, "deduplicated": 0}
    with (
        ThreadPoolExecutor(max(1, args.in_flight)) as pool,
        tqdm(total=len(todo), unit="memory", file=sys.stderr, mininterval=0.2) as bar,
    ):
        for outcome in pool.map(one, todo):
            counts[outcome] = counts.get(outcome, 0) + 1
            bar.update(1)
    skipped = len(lines) - len(todo)
    new, already = counts.pop("new"), counts.pop("deduplicated")
    print(
        f"imported {new} new, {already} already there"
        + (f", skipped {skipped} not active (pending or rejected)" if skipped else "")
        + (f", skipped {len(bad)} bad line(s)" if bad else "")
    )
    if counts:  # what an earlier import of these lines has become since
        since = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
        return fail(f"not restored: imported before and no longer active ({since})")
    return 0


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
