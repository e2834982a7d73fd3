"""`agentmem sources erase-by`: find, and erase, everything one source of memories wrote.

A poisoned source (a compromised agent key, a thread that read a hostile page, a host whose
client name labels what it saved) is found by the provenance every memory keeps: who
inserted it (`inserted_by`), its thread, its save-intent source (the host's label) and its
labels. A turn belongs to whoever wrote it: with `--inserted-by`, a conversation someone
else started that the principal appended turns to matches too, and only those turns are
erased (`EraseSource` with `appended_by`); the rest of the conversation stays. A
conversation the principal started that others appended turns to loses the principal's
messages (those it was inserted with and the turns it appended) and keeps the others'; one
holding only the principal's messages is erased whole.

Without `--yes` the command lists what matches and changes nothing; with it, each match is
erased for good (at the revision listed: a memory changed since is reported, not erased).
Memories already erased are left out.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

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
    parser.add_argument(
        "--inserted-by",
        default="",
        help="the principal that wrote it (of a conversation others wrote in too, only its "
        "turns go)",
    )
    parser.add_argument("--thread", default="", help="the thread it came from")
    parser.add_argument("--intent-source", default="", help="the host's save-intent source")
    parser.add_argument(
        "--label", action="append", default=[], help="KEY=VALUE (repeatable: all must match)"
    )
    parser.add_argument("--reason", default="", help="a short reason for the audit")
    parser.add_argument("--yes", action="store_true", help="erase them (default: only list)")
    parser.set_defaults(func=run(erase_by), words=("sources", "erase-by"))


def _matches_besides_principal(memory: review_pb2.Memory, args: argparse.Namespace) -> bool:
    labels = dict(item.partition("=")[::2] for item in args.label)
    return (
        memory.status != sources_pb2.STATUS_ERASED
        and (not args.thread or memory.thread_id == args.thread)
        and (not args.intent_source or memory.save_intent_source == args.intent_source)
        and all(memory.labels.get(k) == v for k, v in labels.items())
    )


def _inserted_part(memory: review_pb2.Memory) -> bool:
    """Whether the conversation still holds the messages it was inserted with (a partial
    erasure of its inserter's turns empties that part: its first turn is then at 0)."""
    return not memory.appended_turns or memory.appended_turns[0].first_message > 0


def _others(memory: review_pb2.Memory, principal: str) -> int:
    """Turns principals other than `principal` appended to a conversation."""
    return sum(t.appended_by != principal for t in memory.appended_turns)


def _only(memory: review_pb2.Memory, principal: str) -> bool:
    """Whether every message the memory holds is `principal`'s."""
    return (memory.inserted_by == principal or not _inserted_part(memory)) and not _others(
        memory, principal
    )


def matches(memory: review_pb2.Memory, args: argparse.Namespace) -> bool:
    """The whole memory matches (it is erased whole): with `--inserted-by`, it holds only
    that principal's messages."""
    if args.inserted_by and not _only(memory, args.inserted_by):
        return False
    return _matches_besides_principal(memory, args)


def appended_turns(memory: review_pb2.Memory, args: argparse.Namespace) -> int:
    """How many turns of a conversation others wrote in too are `--inserted-by`'s: those
    it appended, and its inserted part if it started the conversation (0: none, or the
    memory matches whole)."""
    if not args.inserted_by or not _matches_besides_principal(memory, args):
        return 0
    if _only(memory, args.inserted_by):
        return 0
    principal: str = args.inserted_by
    inserted = memory.inserted_by == principal and _inserted_part(memory)
    return int(inserted) + sum(t.appended_by == principal for t in memory.appended_turns)


@dataclass
class Found:
    whole: list[review_pb2.Memory]
    turns_of: list[tuple[review_pb2.Memory, int]]  # (a conversation, the principal's turns)


def find(client: Client, args: argparse.Namespace) -> Found:
    found = Found([], [])
    token = ""
    while True:
        page = client.list_memories(status_filter="all", page_size=1000, page_token=token)
        for m in page.memories:
            if matches(m, args):
                found.whole.append(m)
            elif n := appended_turns(m, args):
                found.turns_of.append((m, n))
        token = page.next_page_token
        if not token:
            return found


def erase_by(client: Client, args: argparse.Namespace) -> int:
    if not (args.inserted_by or args.thread or args.intent_source or args.label):
        return fail("name at least one of --inserted-by, --thread, --intent-source, --label")
    if any("=" not in item for item in args.label):
        return fail("--label takes KEY=VALUE")
    found = find(client, args)
    if not found.whole and not found.turns_of:
        print(
            "no memory matches: nothing would be erased"
            if not args.yes
            else "no memory matches: nothing erased"
        )
        return 0
    if not args.yes:
        _list(found, args)
        return 0
    refused = 0
    erased = 0
    for m in found.whole:
        try:
            client.erase_source(
                source_id=m.source_id, expected_revision=m.revision, reason=args.reason
            )
            erased += 1
        except ApiError as e:
            refused += 1
            print(f"agentmem: {m.source_id}: {e.explain()}", file=sys.stderr)
    turns = messages = conversations = 0
    for m, _ in found.turns_of:
        try:
            done = client.erase_source(
                source_id=m.source_id,
                expected_revision=m.revision,
                reason=args.reason,
                appended_by=args.inserted_by,
            )
            conversations += 1
            turns += done.receipt.turns_erased
            messages += done.receipt.messages_erased
        except ApiError as e:
            refused += 1
            print(f"agentmem: {m.source_id}: {e.explain()}", file=sys.stderr)
    note = f" ({refused} refused)" if refused else ""
    if found.whole:
        print(f"erased {erased} of {len(found.whole)} memories{note if not found.turns_of else ''}")
    if found.turns_of:
        print(
            shown(
                f"erased {turns} turns ({messages} messages) {args.inserted_by} wrote in "
                f"{conversations} of {len(found.turns_of)} conversations; the rest of them "
                f"stays{note}"
            )
        )
    return 1 if refused else 0


def _list(found: Found, args: argparse.Namespace) -> None:
    for m in found.whole:
        print(shown(f"{m.source_id}  rev {m.revision}  by {m.inserted_by}  {m.thread_id}"))
    for m, n in found.turns_of:
        if m.inserted_by == args.inserted_by:
            what = (
                f"{n} turns {args.inserted_by} wrote (it started the conversation; "
                f"{_others(m, args.inserted_by)} turns others appended stay)"
            )
        else:
            what = (
                f"{n} turns appended by {args.inserted_by} "
                f"to {m.inserted_by}'s conversation (only those)"
            )
        print(shown(f"{m.source_id}  rev {m.revision}  {what}  {m.thread_id}"))
    if found.whole:
        print(f"{len(found.whole)} memories match; --yes erases them")
    if found.turns_of:
        print(
            f"{len(found.turns_of)} conversations hold turns {shown(args.inserted_by)} wrote "
            "beside others'; --yes erases those turns and keeps the rest"
        )
