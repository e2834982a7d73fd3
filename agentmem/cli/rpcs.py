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

from agentmem.cli.client import _run
from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    common_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
)

Build = Callable[[argparse.Namespace], Any]


def _show(message: Any, args: argparse.Namespace) -> None:
    data = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    if args.json:
        print(json.dumps(data))
        return
    for key, value in data.items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            for item in value:
                print(
                    "  "
                    + "  ".join(
                        f"{k}={v}" for k, v in item.items() if not isinstance(v, (dict, list))
                    )
                )
        elif isinstance(value, dict):
            print(
                f"{key}: "
                + "  ".join(f"{k}={v}" for k, v in value.items() if not isinstance(v, (dict, list)))
            )
        else:
            print(f"{key}: {value}")


def _enum(enum: Any, prefix: str, value: str) -> int:
    return enum.Value(prefix + value.upper()) if value else 0


def _pointer(a: argparse.Namespace) -> foreign_pb2.ThinPointer:
    return foreign_pb2.ThinPointer(
        uri=a.uri,
        content_digest=a.digest,
        media_type=a.media_type,
        title=a.title,
        descriptor=a.descriptor,
    )


# (command words, RPC, request builder, arguments)
SPECS: list[tuple[tuple[str, ...], str, Build, list[tuple[str, dict]]]] = [
    (
        ("insert",),
        "InsertMemory",
        lambda a: sources_pb2.InsertMemoryRequest(
            content=a.content,
            thread_id=a.thread,
            request_id=a.request_id,
            metadata=sources_pb2.InsertMetadata(
                save_intent=a.save_intent, save_intent_source=a.save_intent_source
            ),
        ),
        [
            ("content", {}),
            ("--thread", {"default": ""}),
            ("--request-id", {"default": ""}),
            ("--save-intent", {"default": ""}),
            ("--save-intent-source", {"default": ""}),
        ],
    ),
    (
        ("sources", "list"),
        "ListSources",
        lambda a: sources_pb2.ListSourcesRequest(
            page_size=a.page_size,
            filter=sources_pb2.SourceFilter(
                classification=_enum(
                    sources_pb2.Classification, "CLASSIFICATION_", a.classification
                )
            ),
        ),
        [("--page-size", {"type": int, "default": 100}), ("--classification", {"default": ""})],
    ),
    (
        ("sources", "get"),
        "GetSource",
        lambda a: sources_pb2.GetSourceRequest(source_id=a.source_id, include_content=a.content),
        [("source_id", {}), ("--content", {"action": "store_true"})],
    ),
    (
        ("sources", "classify"),
        "SetSourceClassification",
        lambda a: sources_pb2.SetSourceClassificationRequest(
            source_id=a.source_id,
            expected_revision=a.expected_revision,
            classification=_enum(sources_pb2.Classification, "CLASSIFICATION_", a.classification),
        ),
        [
            ("source_id", {}),
            ("classification", {"choices": ["active", "cold"]}),
            ("--expected-revision", {"type": int, "required": True}),
        ],
    ),
    (
        ("sources", "revoke"),
        "RevokeSource",
        lambda a: foreign_pb2.RevokeSourceRequest(source_id=a.source_id, reason=a.reason),
        [("source_id", {}), ("--reason", {"default": ""})],
    ),
    (
        ("sources", "erase"),
        "EraseSource",
        lambda a: foreign_pb2.EraseSourceRequest(
            source_id=a.source_id, expected_revision=a.expected_revision, reason=a.reason
        ),
        [
            ("source_id", {}),
            ("--expected-revision", {"type": int, "required": True}),
            ("--reason", {"default": ""}),
        ],
    ),
    (
        ("sources", "readback"),
        "ReadbackSource",
        lambda a: foreign_pb2.ReadbackSourceRequest(source_id=a.source_id),
        [("source_id", {})],
    ),
    (
        ("search",),
        "SearchMemories",
        lambda a: retrieval_pb2.SearchMemoriesRequest(
            query=a.query, limit=a.limit, thread_id=a.thread
        ),
        [("query", {}), ("--limit", {"type": int, "default": 10}), ("--thread", {"default": ""})],
    ),
    (
        ("prompt",),
        "AssemblePrompt",
        lambda a: retrieval_pb2.AssemblePromptRequest(
            query=a.query, thread_id=a.thread, token_budget=a.budget
        ),
        [("query", {}), ("--thread", {"default": ""}), ("--budget", {"type": int, "default": 500})],
    ),
    (
        ("explain",),
        "ExplainRetrieval",
        lambda a: retrieval_pb2.ExplainRetrievalRequest(
            query=a.query, limit=a.limit, thread_id=a.thread
        ),
        [("query", {}), ("--limit", {"type": int, "default": 10}), ("--thread", {"default": ""})],
    ),
    (
        ("memories", "list"),
        "ListMemories",
        lambda a: review_pb2.ListMemoriesRequest(
            status_filter=_enum(review_pb2.MemoryStatusFilter, "MEMORY_STATUS_FILTER_", a.status),
            page_size=a.page_size,
        ),
        [
            (
                "--status",
                {"default": "", "choices": ["", "active", "pending_review", "rejected", "all"]},
            ),
            ("--page-size", {"type": int, "default": 100}),
        ],
    ),
    (
        ("memories", "review"),
        "ReviewMemory",
        lambda a: review_pb2.ReviewMemoryRequest(
            source_id=a.source_id,
            expected_revision=a.expected_revision,
            decision=_enum(review_pb2.Decision, "DECISION_", a.decision),
            note=a.note,
        ),
        [
            ("source_id", {}),
            ("decision", {"choices": ["approve", "reject"]}),
            ("--expected-revision", {"type": int, "required": True}),
            ("--note", {"default": ""}),
        ],
    ),
    (("policy", "get"), "GetInsertPolicy", lambda a: review_pb2.GetInsertPolicyRequest(), []),
    (
        ("policy", "set"),
        "SetInsertPolicy",
        lambda a: review_pb2.SetInsertPolicyRequest(
            expected_revision=a.expected_revision,
            insert_policy=_enum(common_pb2.InsertPolicy, "INSERT_POLICY_", a.policy),
        ),
        [
            ("policy", {"choices": ["permissive", "require_save_intent", "review_pending"]}),
            ("--expected-revision", {"type": int, "required": True}),
        ],
    ),
    (
        ("facts", "search"),
        "SearchFacts",
        lambda a: facts_pb2.SearchFactsRequest(
            query=a.query, save_intent_source=a.save_intent_source
        ),
        [("query", {"nargs": "?", "default": ""}), ("--save-intent-source", {"default": ""})],
    ),
    (("profile",), "GetProfile", lambda a: facts_pb2.GetProfileRequest(), []),
    (
        ("ask",),
        "Ask",
        lambda a: facts_pb2.AskRequest(question=a.question, token_budget=a.budget),
        [("question", {}), ("--budget", {"type": int, "default": 300})],
    ),
    (
        ("owner-key", "register"),
        "RegisterOwnerKey",
        lambda a: foreign_pb2.RegisterOwnerKeyRequest(
            owner_id=a.owner, key_id=a.key_id, public_key_pem=Path(a.pem_file).read_text()
        ),
        [("owner", {}), ("key_id", {}), ("pem_file", {})],
    ),
    (
        ("owner-key", "revoke"),
        "RevokeOwnerKey",
        lambda a: foreign_pb2.RevokeOwnerKeyRequest(owner_id=a.owner, key_id=a.key_id),
        [("owner", {}), ("key_id", {})],
    ),
    (
        ("foreign", "prepare"),
        "PrepareForeignSource",
        lambda a: foreign_pb2.PrepareForeignSourceRequest(
            canonical_owner=a.owner, pointer=_pointer(a)
        ),
        [],
    ),
    (
        ("foreign", "admit"),
        "AdmitForeignSource",
        lambda a: foreign_pb2.AdmitForeignSourceRequest(
            canonical_owner=a.owner, pointer=_pointer(a), assent=a.assent
        ),
        [("--assent", {"required": True})],
    ),
    (
        ("foreign", "revoke-assent"),
        "RevokeAssent",
        lambda a: foreign_pb2.RevokeAssentRequest(
            source_id=a.source_id, assent_id=a.assent_id, revocation=a.revocation
        ),
        [("source_id", {}), ("assent_id", {}), ("--revocation", {"default": ""})],
    ),
]
POINTER_ARGS = [
    ("owner", {}),
    ("--uri", {"required": True}),
    ("--digest", {"required": True}),
    ("--media-type", {"required": True}),
    ("--title", {"default": ""}),
    ("--descriptor", {"default": ""}),
]


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    groups: dict[str, argparse._SubParsersAction] = {}
    for words, rpc, build, arguments in SPECS:
        if len(words) == 1:
            parser = sub.add_parser(words[0], parents=[common], help=f"call {rpc}")
        else:
            if words[0] not in groups:
                groups[words[0]] = sub.add_parser(
                    words[0], help=f"{words[0]} commands"
                ).add_subparsers(dest="action", required=True)
            parser = groups[words[0]].add_parser(words[1], parents=[common], help=f"call {rpc}")
        for name, options in (
            POINTER_ARGS if words[0] == "foreign" and words[1] != "revoke-assent" else []
        ) + arguments:
            parser.add_argument(name, **options)
        parser.set_defaults(func=_run(_rpc(rpc, build)))

    imp = sub.add_parser("import", parents=[common], help="insert memories from a JSONL file")
    imp.add_argument("file")
    imp.add_argument("--in-flight", type=int, default=16)
    imp.set_defaults(func=_run(_import))
    exp = sub.add_parser(
        "export", parents=[common], help="memories as JSONL (text with memory.content.read)"
    )
    exp.set_defaults(func=_run(_export))
    doc = sub.add_parser(
        "doctor", parents=[common], help="check the gateway, runtime and database, in plain words"
    )
    doc.set_defaults(func=_doctor)


def _rpc(name: str, build: Build) -> Callable[[Any, argparse.Namespace], int]:
    def command(stub: Any, args: argparse.Namespace) -> int:
        _show(getattr(stub, name)(build(args), timeout=30), args)
        return 0

    return command


def _import(stub: Any, args: argparse.Namespace) -> int:
    """One memory per line: {"content"|"messages", "thread_id"?, "metadata"?, "request_id"?}.
    Each line gets a stable request_id (its own, or one derived from the file and the line),
    so running the import again after an interruption inserts nothing twice."""
    from tqdm import tqdm

    path = Path(args.file)
    lines = path.read_text().splitlines()
    salt = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]

    def one(item: tuple[int, str]) -> str:
        number, line = item
        record = json.loads(line)
        request = json_format.ParseDict(
            {k: v for k, v in record.items() if k != "request_id"},
            sources_pb2.InsertMemoryRequest(),
        )
        request.request_id = record.get("request_id") or (
            f"import-{salt}-{number}-{hashlib.sha256(line.encode()).hexdigest()[:12]}"
        )
        return "deduplicated" if stub.InsertMemory(request, timeout=60).deduplicated else "new"

    items = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    counts = {"new": 0, "deduplicated": 0}
    with (
        ThreadPoolExecutor(max(1, args.in_flight)) as pool,
        tqdm(total=len(items), unit="memory", file=sys.stderr, mininterval=0.2) as bar,
    ):
        for outcome in pool.map(one, items):
            counts[outcome] += 1
            bar.update(1)
    print(f"imported {counts['new']} new, {counts['deduplicated']} already there")
    return 0


def _export(stub: Any, args: argparse.Namespace) -> int:
    token = ""
    while True:
        page = stub.ListMemories(
            review_pb2.ListMemoriesRequest(
                status_filter=review_pb2.MEMORY_STATUS_FILTER_ALL, page_size=1000, page_token=token
            ),
            timeout=60,
        )
        for memory in page.memories:
            print(json.dumps(json_format.MessageToDict(memory, preserving_proto_field_name=True)))
        token = page.next_page_token
        if not token:
            return 0


def _doctor(args: argparse.Namespace) -> int:
    from agentmem.client import channel_target, connect

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
        report(False, "", f"no gateway answers at {args.addr}: is it running? (make run)")
        return 1
    token = os.environ.get("AGENTMEM_TOKEN", "")
    if not token:
        report(False, "", "AGENTMEM_TOKEN is not set: the remaining checks need a credential")
        return 1
    with connect(args.addr, token) as client:
        try:
            client.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest(), timeout=10)
            report(True, "your credential is accepted and the runtime answers", "")
        except grpc.RpcError as e:
            code = e.code()
            report(
                False,
                "",
                {
                    grpc.StatusCode.UNAUTHENTICATED: "the gateway does not know your credential",
                    grpc.StatusCode.PERMISSION_DENIED: "your credential lacks memory.read",
                    grpc.StatusCode.UNAVAILABLE: "the gateway cannot reach the memory runtime",
                }.get(code, f"the gateway answered {code.name}"),
            )
            return 1
        try:
            client.ListSources(sources_pb2.ListSourcesRequest(page_size=1), timeout=10)
            report(True, "the database answers a read", "")
        except grpc.RpcError as e:
            report(False, "", f"the database did not answer a read ({e.code().name})")
        try:
            ok = client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest(), timeout=30).ok
            report(ok, "the audit chain verifies", "the audit chain does NOT verify")
        except grpc.RpcError:
            print("skip  the audit chain check needs the memory.admin scope")
    return 1 if problems else 0
