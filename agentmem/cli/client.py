"""Client commands: call the gateway with AGENTMEM_ADDR and AGENTMEM_TOKEN through the typed
client, so errors are decoded in one place and printed as one plain line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format

from agentmem.cli import render
from agentmem.client import (
    ENV_ADDRESS,
    ENV_EXPERIMENTAL,
    ENV_TOKEN,
    Client,
    numbers,
    retrieval_status,
)
from agentmem.client.commands import SubParsers
from agentmem.client.errors import ApiError, Unavailable
from agentmem.client.json_output import to_output
from agentmem.client.methods import enum_name
from agentmem.contract.invisible import shown
from agentmem.v1 import audit_pb2, common_pb2, events_pb2, thread_mode_pb2

MODES = ("enabled", "disabled")
EVENT_KINDS = [
    k.removeprefix("EVENT_KIND_").lower()
    for k in events_pb2.EventKind.keys()  # noqa: SIM118
    if not k.endswith("UNSPECIFIED")
]


def common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--addr",
        default=os.environ.get(ENV_ADDRESS, "127.0.0.1:50051"),
        help=f"gateway address HOST:PORT (env {ENV_ADDRESS}; default 127.0.0.1:50051)",
    )
    common.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    common.add_argument(
        "--receipt", action="store_true", help="after a write, print its audit receipt too"
    )
    common.add_argument(
        "--experimental",
        action="append",
        metavar="CAPABILITY",
        help=f"opt in to an experimental capability, e.g. foreign_sources; repeatable "
        f"(env {ENV_EXPERIMENTAL}, comma-separated)",
    )
    return common


def add_parsers(sub: SubParsers) -> argparse.ArgumentParser:
    common = common_options()
    caps = sub.add_parser("capabilities", parents=[common], help="what the server offers")
    caps.set_defaults(func=run(_capabilities))

    tm = sub.add_parser("thread-mode", help="read or set a thread's memory mode")
    tms = tm.add_subparsers(dest="action", required=True)
    get = tms.add_parser("get", parents=[common], help="read a thread's memory mode")
    get.add_argument("thread_id", help="the thread")
    get.set_defaults(func=run(_thread_get))
    st = tms.add_parser("set", parents=[common], help="enable or disable memory for a thread")
    st.add_argument("thread_id", help="the thread")
    st.add_argument("mode", choices=MODES, help="enabled or disabled")
    st.add_argument(
        "--expected-revision",
        type=numbers.field(thread_mode_pb2.SetThreadMemoryModeRequest, "expected_revision"),
        required=True,
        help="the revision you last read (0 for a thread never set)",
    )
    st.add_argument(
        "--request-id", default="", help="an id of yours for this change, kept in its audit receipt"
    )
    st.set_defaults(func=run(_thread_set))

    watch = sub.add_parser("watch", parents=[common], help="stream events, resumable")
    watch.add_argument(
        "--after",
        type=numbers.field(events_pb2.WatchEventsRequest, "after_sequence"),
        default=0,
        help="resume after this sequence",
    )
    watch.add_argument(
        "--kind",
        action="append",
        default=[],
        choices=EVENT_KINDS,
        help="only events of this kind (repeatable)",
    )
    watch.add_argument(
        "--limit", type=numbers.within(0), default=0, help="stop after this many events"
    )
    watch.add_argument(
        "--retry-for",
        type=float,
        default=60.0,
        help="seconds to keep resuming an interrupted watch without progress",
    )
    watch.set_defaults(func=run(_watch))

    audit = sub.add_parser("audit", help="audit receipts")
    aus = audit.add_subparsers(dest="action", required=True)
    lst = aus.add_parser("list", parents=[common], help="list audit receipts (oldest first)")
    lst.add_argument("--target", default="", help="only receipts about this id")
    lst.add_argument(
        "--page-size",
        type=numbers.field(audit_pb2.ListAuditReceiptsRequest, "page_size"),
        default=100,
        help="receipts per page (1-1000)",
    )
    lst.add_argument("--all", action="store_true", help="follow every page")
    lst.add_argument("--page-token", default="", help="start at this page (as the last page said)")
    lst.add_argument("--newest-first", action="store_true", help="newest first (default: oldest)")
    lst.set_defaults(func=run(_audit_list))
    ver = aus.add_parser("verify", parents=[common], help="recompute the receipts' hash chain")
    ver.set_defaults(func=run(_audit_verify))
    return common


def client_for(args: argparse.Namespace) -> Client:
    return Client(args.addr, os.environ.get(ENV_TOKEN, ""), experimental=args.experimental)


def fail(message: str) -> int:
    print(f"agentmem: {message}", file=sys.stderr)
    return 1


def run(fn: Callable[[Client, argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command with a client: API errors become one line on stderr, never a traceback."""

    def command(args: argparse.Namespace) -> int:
        if not os.environ.get(ENV_TOKEN):
            print(f"agentmem: set {ENV_TOKEN} to your credential", file=sys.stderr)
            return 2
        with client_for(args) as client:
            try:
                return fn(client, args)
            except Unavailable as e:
                return fail(_unreachable(e, client.address, bool(client.settings.credentials)))
            except ApiError as e:
                return fail(e.explain())
            except OSError as e:  # a file named on the command line
                if isinstance(e, BrokenPipeError):
                    raise
                return fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
            except KeyboardInterrupt:
                return 130

    return command


def _unreachable(e: ApiError, address: str, tls: bool) -> str:
    """One line for a gateway that cannot be reached (never gRPC's own log lines)."""
    detail = e.message.lower()
    if tls and ("handshake" in detail or "ssl" in detail or "tls" in detail):
        return (
            f"the TLS handshake with {address} failed: is the gateway serving plaintext? "
            f"(use {address} without https://), or is its certificate not trusted "
            f"(set AGENTMEM_CA_FILE)?"
        )
    if "failed to connect" in detail or "connection refused" in detail:
        return f"no gateway answers at {address}: is it running? (agentmem up; {ENV_ADDRESS})"
    return e.explain()


def emit(message: Any, args: argparse.Namespace, human: str) -> None:
    if args.json:
        print(json.dumps(to_output(message)))
    else:
        print(shown(human))


def _mode(value: int) -> str:
    return enum_name(common_pb2.MemoryMode, "MEMORY_MODE_", value)


def _capabilities(client: Client, args: argparse.Namespace) -> int:
    r = client.get_capabilities()
    rows = [
        f"{c.name:<20} {'enabled' if c.enabled else 'disabled'}"
        + (f" (experimental{', opted in' if c.opted_in else ''})" if c.experimental else "")
        for c in r.capabilities
    ]
    policy = enum_name(common_pb2.InsertPolicy, "INSERT_POLICY_", r.insert_policy)
    note = f"experimental capabilities need --experimental NAME (metadata {r.experimental_opt_in})"
    retrieval = (
        f"retrieval by words and meaning ({r.retrieval.embedding_model})"
        if r.retrieval.mode == "hybrid"
        else f"retrieval by words only ({r.retrieval.lexical_only_reason or 'lexical'})"
    )
    head = f"api {r.api_version}, insert policy {policy}, {retrieval}"
    lag = retrieval_status.behind(r.retrieval)
    emit(r, args, "\n".join([head, *([f"warning: {lag}"] if lag else []), *rows, note]))
    return 0


def _thread_get(client: Client, args: argparse.Namespace) -> int:
    r = client.read_thread_memory_mode(thread_id=args.thread_id)
    since = (
        f"revision {r.revision}, since {render.relative(r.effective_at)}"
        if r.HasField("effective_at")
        else "never set: the default"
    )
    emit(r, args, f"thread {r.thread_id}: memory {_mode(r.mode)} ({since})")
    return 0


def _thread_set(client: Client, args: argparse.Namespace) -> int:
    r = client.set_thread_memory_mode(
        thread_id=args.thread_id,
        mode=args.mode,
        expected_revision=args.expected_revision,
        request_id=args.request_id,
    )
    emit(r, args, "\n".join(render.write(r, ("thread-mode", "set"), args.receipt)))
    return 0


def _watch(client: Client, args: argparse.Namespace) -> int:
    """Prints events; when the stream is cut (server restart or drain, a slow reader), the
    client resumes after the last sequence printed, with backoff, for up to --retry-for
    seconds without progress: no gap, no duplicate."""

    def resuming(last: int, error: ApiError) -> None:
        code = error.code().name if error.code() else "UNAVAILABLE"
        print(f"agentmem: watch interrupted ({code}); resuming after {last}", file=sys.stderr)

    events = client.watch(
        after_sequence=args.after,
        kinds=args.kind,
        give_up_after=args.retry_for,
        on_resume=resuming,
    )
    for seen, e in enumerate(events, start=1):
        payload = e.WhichOneof("payload") or "unknown"
        body = json_format.MessageToDict(getattr(e, payload), preserving_proto_field_name=True)
        if args.json:
            line = json.dumps(
                {"sequence": e.sequence, "at": e.at.ToJsonString(), "kind": payload, **body}
            )
        else:
            line = f"{e.sequence:>8} {e.at.ToJsonString()} {payload} {json.dumps(body)}"
        print(line, flush=True)
        if args.limit and seen >= args.limit:
            break
    return 0


def _audit_list(client: Client, args: argparse.Namespace) -> int:
    token = args.page_token
    while True:
        r = client.list_audit_receipts(
            target_id=args.target,
            page_size=args.page_size,
            page_token=token,
            newest_first=args.newest_first,
        )
        for rc in r.receipts:
            emit(
                rc,
                args,
                f"{rc.sequence:>6} {rc.at.ToJsonString()} {rc.action:<24} "
                f"{rc.target_kind}/{rc.target_id}@{rc.target_revision} by {rc.principal_id}",
            )
        token = r.next_page_token
        if not token or not args.all:
            if token and not args.json:
                print(f"(more: --all to follow every page, or --page-token {token})")
            return 0


def _audit_verify(client: Client, args: argparse.Namespace) -> int:
    r = client.verify_audit_chain()
    state = "ok" if r.ok else f"BROKEN at sequence {r.first_invalid_sequence}"
    emit(r, args, f"audit chain {state}: {r.length} receipts, head {r.head_hash or '-'}")
    return 0 if r.ok else 1
