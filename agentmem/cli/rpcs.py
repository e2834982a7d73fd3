"""Client subcommands for the public RPCs not covered by `client.py` (their specs are in
`specs_memory`, `specs_sessions` and `specs_knowledge`), plus import, export and doctor.
Human output by default, `--json` for scripts."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from google.protobuf.message import Message

from agentmem.cli import erase_by, render
from agentmem.cli.client import run
from agentmem.cli.doctor import doctor
from agentmem.cli.spec_args import POINTER_ARGS, Call, Spec
from agentmem.cli.specs_knowledge import KNOWLEDGE_SPECS
from agentmem.cli.specs_memory import MEMORY_SPECS
from agentmem.cli.specs_sessions import SESSION_SPECS
from agentmem.cli.transfer import export, import_
from agentmem.client import Client, numbers
from agentmem.client.commands import SubParsers
from agentmem.client.json_output import to_output
from agentmem.contract.invisible import shown

SPECS: list[Spec] = [*MEMORY_SPECS, *SESSION_SPECS, *KNOWLEDGE_SPECS]


# `sources list` without --state lists active sources only (the runtime leaves pending,
# rejected and erased ones out), so its empty answer says so and how to see the others.
NO_ACTIVE_SOURCES = (
    "no active sources (pending, rejected and erased ones are listed with "
    "--state pending_review, --state rejected or --state erased)"
)


def _show(message: Message, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(to_output(message)))
        return
    lines = render.show(message, args.words, receipt=args.receipt)
    if args.words == ("sources", "list") and not args.state and lines == ["no sources"]:
        lines = [NO_ACTIVE_SOURCES]
    print(shown("\n".join(lines)))


def add_parsers(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    groups: dict[str, SubParsers] = {}
    for words, summary, call, arguments in SPECS:
        if len(words) == 1:
            parser = sub.add_parser(words[0], parents=[common], help=summary)
        else:
            if words[0] not in groups:
                groups[words[0]] = sub.add_parser(
                    words[0], help=f"{words[0]} commands"
                ).add_subparsers(dest="action", required=True)
            parser = groups[words[0]].add_parser(words[1], parents=[common], help=summary)
        for name, options in (
            POINTER_ARGS if words[0] == "foreign" and words[1] != "revoke-assent" else []
        ) + arguments:
            parser.add_argument(name, **options)
        parser.set_defaults(func=run(_rpc(call)), words=words)
    erase_by.add_parser(groups["sources"], common)

    imp = sub.add_parser(
        "import",
        parents=[common],
        help="insert memories from a JSON Lines file, as export writes them",
    )
    imp.add_argument("file", help="the .jsonl file, as `agentmem export` writes it")
    imp.add_argument(
        "--in-flight",
        type=numbers.within(1, 1024),
        default=16,
        help="inserts in flight at once (1-1024)",
    )
    imp.add_argument(
        "--keep-going",
        action="store_true",
        help="go on past a line the server refuses (default: stop there); "
        "either way the counts end the output and a refusal exits 1",
    )
    imp.add_argument(
        "--on-bad-line",
        choices=["stop", "skip"],
        default="stop",
        help="stop: report every bad line and import nothing (default); "
        "skip: report bad lines and import the rest",
    )
    imp.set_defaults(func=run(import_))
    exp = sub.add_parser(
        "export",
        parents=[common],
        help="every memory as JSON Lines, the format `import` reads (text needs "
        "memory.content.read)",
    )
    exp.set_defaults(func=run(export))
    doc = sub.add_parser(
        "doctor", parents=[common], help="check the gateway, runtime and database, in plain words"
    )
    doc.add_argument(
        "--hosts",
        action="store_true",
        help="check instead the MCP hosts' configurations (Codex, Claude Code, opencode, "
        "Gemini CLI): the command resolves, its credential works, its server lists tools",
    )
    doc.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="--hosts: how long a configured MCP server may take to list its tools",
    )
    doc.set_defaults(func=doctor)


def _rpc(call: Call) -> Callable[[Client, argparse.Namespace], int]:
    def command(client: Client, args: argparse.Namespace) -> int:
        _show(call(client, args), args)
        return 0

    return command
