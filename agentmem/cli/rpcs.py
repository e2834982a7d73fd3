"""Client subcommands for the public RPCs not covered by `client.py`, plus import, export
and doctor. Human output by default, `--json` for scripts."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agentmem.cli import jsonl, render
from agentmem.cli.client import client_for, fail, run
from agentmem.client import ENV_TOKEN, Client
from agentmem.client_errors import ApiError, MissingScope, Unauthenticated, Unavailable
from agentmem.client_values import enum_names, timestamp
from agentmem.v1 import sources_pb2

Call = Callable[[Client, argparse.Namespace], Any]
COLD = sources_pb2.CLASSIFICATION_COLD
SAVE_INTENTS = ("explicit_user_request", "user_confirmed", "client_auto_save")
STATES = enum_names(sources_pb2.EffectiveRetrievalState, "EFFECTIVE_RETRIEVAL_STATE_")


def _show(message: Any, args: argparse.Namespace) -> None:
    if args.json:
        data = json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        print(json.dumps(data))
        return
    print("\n".join(render.show(message, args.words, receipt=args.receipt)))


def _pointer(a: argparse.Namespace) -> dict[str, str]:
    return {
        "uri": a.uri,
        "content_digest": a.digest,
        "media_type": a.media_type,
        "title": a.title,
        "descriptor": a.descriptor,
    }


def _review(c: Client, a: argparse.Namespace) -> Any:
    """Without --expected-revision, read the current revision first; a change in between
    still fails safely with REVISION_MISMATCH (and the current revision)."""
    revision = a.expected_revision
    if revision is None:
        revision = c.get_source(source_id=a.source_id).revision
    return c.review_memory(
        source_id=a.source_id, decision=a.decision, expected_revision=revision, note=a.note
    )


def _moment(value: str) -> str:
    """An ISO 8601 date or time ("2024-06-01", "2024-06-01T09:30:00Z"; UTC unless it says)."""
    try:
        timestamp(value)
    except ApiError:
        raise argparse.ArgumentTypeError("expected an ISO 8601 date or time") from None
    return value


THREAD = ("--thread", {"default": "", "help": "the thread it belongs to (optional)"})
AS_OF = (
    "--as-of",
    {"type": _moment, "default": None, "help": "as it was at this date or time (ISO 8601)"},
)
LIMIT = ("--limit", {"type": int, "default": 10, "help": "at most this many results (1-100)"})
PAGE_SIZE = ("--page-size", {"type": int, "default": 100, "help": "items per page (1-1000)"})
PAGE_TOKEN = ("--page-token", {"default": "", "help": "the next page (as the last page said)"})
SOURCE_ID = ("source_id", {"help": "the source id (src_…)"})
EXPECTED = (
    "--expected-revision",
    {"type": int, "required": True, "help": "the revision you last read (compare-and-swap)"},
)
REVISION_OPT = (
    "--expected-revision",
    {
        "type": int,
        "default": None,
        "help": "the revision you last read; default: read it now (a change in between "
        "still fails with REVISION_MISMATCH)",
    },
)

# (command words, help, call, arguments)
SPECS: list[tuple[tuple[str, ...], str, Call, list[tuple[str, dict]]]] = [
    (
        ("insert",),
        "save a memory",
        lambda c, a: c.insert_memory(
            content=a.content,
            thread_id=a.thread,
            request_id=a.request_id,
            save_intent=a.save_intent,
            save_intent_source=a.save_intent_source,
            save_intent_evidence=a.save_intent_evidence,
            observed_at=a.observed_at,
        ),
        [
            ("content", {"help": "the text to remember"}),
            THREAD,
            (
                "--observed-at",
                {
                    "type": _moment,
                    "default": None,
                    "help": "when it was said or true (ISO 8601; default: now)",
                },
            ),
            ("--request-id", {"default": "", "help": "makes a retry return the first result"}),
            (
                "--save-intent",
                {
                    "default": "",
                    "choices": ["", *SAVE_INTENTS],
                    "help": "why it is saved: " + ", ".join(SAVE_INTENTS),
                },
            ),
            ("--save-intent-source", {"default": "", "help": "the client that saves it"}),
            (
                "--save-intent-evidence",
                {"default": "", "help": "a short non-sensitive note on the user's request"},
            ),
        ],
    ),
    (
        ("sources", "list"),
        "list sources (metadata only)",
        lambda c, a: c.list_sources(
            page_size=a.page_size,
            page_token=a.page_token,
            classification=a.classification,
            effective_state=a.state,
        ),
        [
            PAGE_SIZE,
            PAGE_TOKEN,
            (
                "--state",
                {
                    "default": "",
                    "choices": ["", *STATES],
                    "help": "only sources in this retrieval state",
                },
            ),
            (
                "--classification",
                {"default": "", "choices": ["", "active", "cold"], "help": "only active or cold"},
            ),
        ],
    ),
    (
        ("sources", "get"),
        "show one source",
        lambda c, a: c.get_source(source_id=a.source_id, include_content=a.content),
        [
            SOURCE_ID,
            ("--content", {"action": "store_true", "help": "include the text (content scope)"}),
        ],
    ),
    (
        ("sources", "classify"),
        "mark a source active or cold",
        lambda c, a: c.set_source_classification(
            source_id=a.source_id,
            classification=a.classification,
            expected_revision=a.expected_revision,
        ),
        [
            SOURCE_ID,
            ("classification", {"choices": ["active", "cold"], "help": "active or cold"}),
            EXPECTED,
        ],
    ),
    (
        ("sources", "revoke"),
        "revoke a source and purge what was derived from it",
        lambda c, a: c.revoke_source(source_id=a.source_id, reason=a.reason),
        [SOURCE_ID, ("--reason", {"default": "", "help": "a short reason for the audit"})],
    ),
    (
        ("sources", "erase"),
        "erase a source for good",
        lambda c, a: c.erase_source(
            source_id=a.source_id, expected_revision=a.expected_revision, reason=a.reason
        ),
        [SOURCE_ID, EXPECTED, ("--reason", {"default": "", "help": "a short reason"})],
    ),
    (
        ("sources", "readback"),
        "list what is still derived from a source",
        lambda c, a: c.readback_source(source_id=a.source_id),
        [SOURCE_ID],
    ),
    (
        ("search",),
        "search memories",
        lambda c, a: c.search_memories(query=a.query, limit=a.limit, thread_id=a.thread),
        [("query", {"help": "what to look for"}), LIMIT, THREAD],
    ),
    (
        ("prompt",),
        "assemble the memory block for a prompt",
        lambda c, a: c.assemble_prompt(query=a.query, thread_id=a.thread, token_budget=a.budget),
        [
            ("query", {"help": "the user's message"}),
            THREAD,
            ("--budget", {"type": int, "default": 500, "help": "token budget"}),
        ],
    ),
    (
        ("explain",),
        "explain which memories a query selects and why",
        lambda c, a: c.explain_retrieval(query=a.query, limit=a.limit, thread_id=a.thread),
        [("query", {"help": "the query to explain"}), LIMIT, THREAD],
    ),
    (
        ("memories", "list"),
        "list memories by review status",
        lambda c, a: c.list_memories(
            status_filter=a.status, page_size=a.page_size, page_token=a.page_token
        ),
        [
            (
                "--status",
                {
                    "default": "",
                    "choices": ["", "active", "pending_review", "rejected", "all"],
                    "help": "review status (default active)",
                },
            ),
            PAGE_SIZE,
            PAGE_TOKEN,
        ],
    ),
    (
        ("memories", "review"),
        "approve or reject a pending memory",
        _review,
        [
            SOURCE_ID,
            ("decision", {"choices": ["approve", "reject"], "help": "approve or reject"}),
            REVISION_OPT,
            ("--note", {"default": "", "help": "a short note for the audit"}),
        ],
    ),
    (("policy", "get"), "show the insert policy", lambda c, a: c.get_insert_policy(), []),
    (
        ("policy", "set"),
        "set the tenant's insert policy",
        lambda c, a: c.set_insert_policy(
            insert_policy=a.policy, expected_revision=a.expected_revision
        ),
        [
            (
                "policy",
                {
                    "choices": ["permissive", "require_save_intent", "review_pending"],
                    "help": "the new policy",
                },
            ),
            EXPECTED,
        ],
    ),
    (
        ("facts", "search"),
        "search extracted facts",
        lambda c, a: c.search_facts(
            query=a.query,
            save_intent_source=a.save_intent_source,
            as_of=a.as_of,
            include_superseded=a.history,
        ),
        [
            ("query", {"nargs": "?", "default": "", "help": "what to look for (optional)"}),
            ("--save-intent-source", {"default": "", "help": "only facts saved by this client"}),
            AS_OF,
            (
                "--history",
                {"action": "store_true", "help": "every value each attribute had, with its dates"},
            ),
        ],
    ),
    (
        ("facts", "retract"),
        "say a fact is wrong: the value before it is current again, its memory stays",
        lambda c, a: c.retract_fact(fact_id=a.fact_id, reason=a.reason),
        [
            ("fact_id", {"help": "the fact id (fact_…)"}),
            ("--reason", {"default": "", "help": "why (optional, not stored)"}),
        ],
    ),
    (
        ("profile",),
        "the user's profile from facts",
        lambda c, a: c.get_profile(as_of=a.as_of),
        [AS_OF],
    ),
    (
        ("ask",),
        "answer a question from memory, with provenance",
        lambda c, a: c.ask(question=a.question, token_budget=a.budget, as_of=a.as_of),
        [
            ("question", {"help": "the question"}),
            ("--budget", {"type": int, "default": 300, "help": "token budget"}),
            AS_OF,
        ],
    ),
    (
        ("owner-key", "register"),
        "register a canonical owner's public key (experimental: foreign_sources)",
        lambda c, a: c.register_owner_key(
            owner_id=a.owner, key_id=a.key_id, public_key_pem=Path(a.pem_file).read_text()
        ),
        [
            ("owner", {"help": "the canonical owner"}),
            ("key_id", {"help": "the key's id (the assent's kid)"}),
            ("pem_file", {"help": "the Ed25519 public key, PEM"}),
        ],
    ),
    (
        ("owner-key", "revoke"),
        "revoke an owner key",
        lambda c, a: c.revoke_owner_key(owner_id=a.owner, key_id=a.key_id),
        [("owner", {"help": "the canonical owner"}), ("key_id", {"help": "the key's id"})],
    ),
    (
        ("foreign", "prepare"),
        "derive a foreign source's identity for the owner to sign",
        lambda c, a: c.prepare_foreign_source(canonical_owner=a.owner, pointer=_pointer(a)),
        [],
    ),
    (
        ("foreign", "admit"),
        "admit a foreign source with the owner's assent",
        lambda c, a: c.admit_foreign_source(
            canonical_owner=a.owner, pointer=_pointer(a), assent=a.assent
        ),
        [("--assent", {"required": True, "help": "the owner's signed assent (compact JWS)"})],
    ),
    (
        ("foreign", "revoke-assent"),
        "revoke the assent a foreign source was admitted with",
        lambda c, a: c.revoke_assent(
            source_id=a.source_id, assent_id=a.assent_id, revocation=a.revocation
        ),
        [
            SOURCE_ID,
            ("assent_id", {"help": "the assent's id (jti)"}),
            ("--revocation", {"default": "", "help": "the owner's signed revocation (JWS)"}),
        ],
    ),
]
POINTER_ARGS = [
    ("owner", {"help": "the canonical owner"}),
    ("--uri", {"required": True, "help": "where the content lives"}),
    ("--digest", {"required": True, "help": "sha256 hex of the content"}),
    ("--media-type", {"required": True, "help": "e.g. text/markdown"}),
    ("--title", {"default": "", "help": "a short title"}),
    ("--descriptor", {"default": "", "help": "a short descriptor"}),
]


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    groups: dict[str, argparse._SubParsersAction] = {}
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

    imp = sub.add_parser(
        "import",
        parents=[common],
        help="insert memories from a JSON Lines file, as export writes them",
    )
    imp.add_argument("file", help="the .jsonl file, as `agentmem export` writes it")
    imp.add_argument("--in-flight", type=int, default=16, help="inserts in flight at once")
    imp.add_argument(
        "--on-bad-line",
        choices=["stop", "skip"],
        default="stop",
        help="stop: report every bad line and import nothing (default); "
        "skip: report bad lines and import the rest",
    )
    imp.set_defaults(func=run(_import))
    exp = sub.add_parser(
        "export",
        parents=[common],
        help="every memory as JSON Lines, the format `import` reads (text needs "
        "memory.content.read)",
    )
    exp.set_defaults(func=run(_export))
    doc = sub.add_parser(
        "doctor", parents=[common], help="check the gateway, runtime and database, in plain words"
    )
    doc.set_defaults(func=_doctor)


def _rpc(call: Call) -> Callable[[Client, argparse.Namespace], int]:
    def command(client: Client, args: argparse.Namespace) -> int:
        _show(call(client, args), args)
        return 0

    return command


def _import(client: Client, args: argparse.Namespace) -> int:
    """Each line gets a stable request id (its own, `import-<source_id>` for an exported
    line, or one derived from the file and the line), so running the import again after an
    interruption inserts nothing twice."""
    from tqdm import tqdm

    path = Path(args.file)
    salt = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    lines, bad = [], []
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                lines.append(jsonl.parse_line(number, jsonl.decode(number, raw), salt))
            except jsonl.BadLine as e:
                bad.append(e)
    for e in bad:
        print(f"agentmem: {args.file}: {e}", file=sys.stderr)
    if bad and args.on_bad_line == "stop":
        return fail(
            f"{len(bad)} bad line(s); nothing imported (--on-bad-line skip imports the rest)"
        )
    todo = [line for line in lines if not line.skip_status]

    def one(line: jsonl.Line) -> str:
        r = client.insert_memory(**line.insert, timeout=60)
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

    counts = {"new": 0, "deduplicated": 0}
    with (
        ThreadPoolExecutor(max(1, args.in_flight)) as pool,
        tqdm(total=len(todo), unit="memory", file=sys.stderr, mininterval=0.2) as bar,
    ):
        for outcome in pool.map(one, todo):
            counts[outcome] += 1
            bar.update(1)
    skipped = len(lines) - len(todo)
    print(
        f"imported {counts['new']} new, {counts['deduplicated']} already there"
        + (f", skipped {skipped} not active (pending or rejected)" if skipped else "")
        + (f", skipped {len(bad)} bad line(s)" if bad else "")
    )
    return 0


def _export(client: Client, args: argparse.Namespace) -> int:
    """Revoked and erased memories are left out (counted apart): an export must never
    bring them back."""
    revoked, erased, token = set(), 0, ""
    while True:
        page = client.list_sources(effective_state="revoked", page_size=1000, page_token=token)
        revoked.update(s.source_id for s in page.sources)
        token = page.next_page_token
        if not token:
            break
    while True:
        page = client.list_memories(
            status_filter="all", page_size=1000, page_token=token, timeout=60
        )
        for memory in page.memories:
            if memory.status == sources_pb2.STATUS_ERASED:
                erased += 1
            elif memory.source_id not in revoked:
                print(jsonl.export_line(memory))
        token = page.next_page_token
        if not token:
            break
    left_out = [f"{n} {what}" for n, what in ((len(revoked), "revoked"), (erased, "erased")) if n]
    if left_out:
        print(f"agentmem: left out {' and '.join(left_out)} memories", file=sys.stderr)
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from agentmem.client import channel_target

    problems = 0

    def report(ok: bool, good: str, bad: str) -> None:
        nonlocal problems
        problems += not ok
        print(("ok    " if ok else "PROBLEM ") + (good if ok else bad))

    try:
        target, tls = channel_target(args.addr)
        channel = grpc.secure_channel(target, tls) if tls else grpc.insecure_channel(target)
        with channel as ch:
            status = (
                health_pb2_grpc.HealthStub(ch)
                .Check(health_pb2.HealthCheckRequest(), timeout=5)
                .status
            )
        report(
            status == health_pb2.HealthCheckResponse.SERVING,
            f"the gateway at {args.addr} is serving",
            f"the gateway at {args.addr} answers but is not serving",
        )
    except grpc.RpcError:
        report(False, "", f"no gateway answers at {args.addr}: is it running? (agentmem up)")
        return 1
    if not os.environ.get(ENV_TOKEN):
        report(False, "", f"{ENV_TOKEN} is not set: the remaining checks need a credential")
        return 1
    with client_for(args) as client:
        try:
            client.get_capabilities(timeout=10)
            report(True, "your credential is accepted and the runtime answers", "")
        except ApiError as e:
            report(
                False,
                "",
                "the gateway does not know your credential"
                if isinstance(e, Unauthenticated)
                else "your credential lacks memory.read"
                if isinstance(e, MissingScope)
                else "the gateway cannot reach the memory runtime"
                if isinstance(e, Unavailable)
                else f"the gateway answered {e}",
            )
            return 1
        try:
            client.list_sources(page_size=1, timeout=10)
            report(True, "the database answers a read", "")
        except ApiError as e:
            report(False, "", f"the database did not answer a read ({e})")
        try:
            ok = client.verify_audit_chain(timeout=30).ok
            report(ok, "the audit chain verifies", "the audit chain does NOT verify")
        except MissingScope:
            print("skip  the audit chain check needs the memory.admin scope")
    return 1 if problems else 0
