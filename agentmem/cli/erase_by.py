"""`agentmem sources erase-by`: find, and erase, everything one source of memories wrote.

A poisoned source (a compromised agent key, a thread that read a hostile page, a host whose
client name labels what it saved) is found by the provenance every memory keeps: who
inserted it (`inserted_by`), its thread, its save-intent source (the host's label) and its
labels. Without `--yes` the command lists what matches and changes nothing; with it, each
match is erased for good (`EraseSource`, at the revision listed: a memory changed since is
reported, not erased). Memories already erased are left out.
"""

from __future__ import annotations

import argparse
import sys

from agentmem.cli.client import fail, run
from agentmem.client import Client
from agentmem.client.commands import SubParsers
from agentmem.client.errors import ApiError
from agentmem.contract.invisible import shown
from agentmem.v1 import review_pb2, sources_pb2


def add_parser(sources: SubParsers, common: argparse.ArgumentParser) -> None:
    parser = sources.add_parser(
        "erase-by",
        parents=[common],
        help="list (or, with --yes, erase) every memory one principal, thread or host wrote",
    )
    parser.add_argument("--inserted-by", default="", help="the principal that inserted it")
    parser.add_argument("--thread", default="", help="the thread it came from")
    parser.add_argument("--intent-source", default="", help="the host's save-intent source")
    parser.add_argument(
        "--label", action="append", default=[], help="KEY=VALUE (repeatable: all must match)"
    )
    parser.add_argument("--reason", default="", help="a short reason for the audit")
    parser.add_argument("--yes", action="store_true", help="erase them (default: only list)")
    parser.set_defaults(func=run(erase_by), words=("sources", "erase-by"))


def matches(memory: review_pb2.Memory, args: argparse.Namespace) -> bool:
    labels = dict(item.partition("=")[::2] for item in args.label)
    return (
        memory.status != sources_pb2.STATUS_ERASED
        and (not args.inserted_by or memory.inserted_by == args.inserted_by)
        and (not args.thread or memory.thread_id == args.thread)
        and (not args.intent_source or memory.save_intent_source == args.intent_source)
        and all(memory.labels.get(k) == v for k, v in labels.items())
    )


def erase_by(client: Client, args: argparse.Namespace) -> int:
    if not (args.inserted_by or args.thread or args.intent_source or args.label):
        return fail("name at least one of --inserted-by, --thread, --intent-source, --label")
    if any("=" not in item for item in args.label):
        return fail("--label takes KEY=VALUE")
    found: list[review_pb2.Memory] = []
    token = ""
    while True:
        page = client.list_memories(status_filter="all", page_size=1000, page_token=token)
        found += [m for m in page.memories if matches(m, args)]
        token = page.next_page_token
        if not token:
            break
    if not found:
        print(
            "no memory matches: nothing would be erased"
            if not args.yes
            else "no memory matches: nothing erased"
        )
        return 0
    if not args.yes:
        for m in found:
            print(shown(f"{m.source_id}  rev {m.revision}  by {m.inserted_by}  {m.thread_id}"))
        print(f"{len(found)} memories match; --yes erases them")
        return 0
    erased, refused = 0, 0
    for m in found:
        try:
            client.erase_source(
                source_id=m.source_id, expected_revision=m.revision, reason=args.reason
            )
            erased += 1
        except ApiError as e:
            refused += 1
            print(f"agentmem: {m.source_id}: {e.explain()}", file=sys.stderr)
    note = f" ({refused} refused)" if refused else ""
    print(f"erased {erased} of {len(found)} memories{note}")
    return 1 if refused else 0
