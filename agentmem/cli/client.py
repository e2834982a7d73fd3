"""Client commands: call the gateway with AGENTMEM_ADDR and AGENTMEM_TOKEN."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import json_format

from agentmem.client import connect
from agentmem.core.grpc_errors import error_info, status_of_call
from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    common_pb2,
    events_pb2,
    thread_mode_pb2,
)

MODES = {"enabled": common_pb2.MEMORY_MODE_ENABLED, "disabled": common_pb2.MEMORY_MODE_DISABLED}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--addr",
        default=os.environ.get("AGENTMEM_ADDR", "127.0.0.1:50051"),
        help="gateway address (env AGENTMEM_ADDR)",
    )
    common.add_argument("--json", action="store_true", help="print JSON (for scripts)")

    caps = sub.add_parser("capabilities", parents=[common], help="what the server offers")
    caps.set_defaults(func=_run(_capabilities))

    tm = sub.add_parser("thread-mode", help="read or set a thread's memory mode")
    tms = tm.add_subparsers(dest="action", required=True)
    get = tms.add_parser("get", parents=[common])
    get.add_argument("thread_id")
    get.set_defaults(func=_run(_thread_get))
    st = tms.add_parser("set", parents=[common])
    st.add_argument("thread_id")
    st.add_argument("mode", choices=sorted(MODES))
    st.add_argument(
        "--expected-revision",
        type=int,
        required=True,
        help="the revision you last read (0 for a thread never set)",
    )
    st.set_defaults(func=_run(_thread_set))

    watch = sub.add_parser("watch", parents=[common], help="stream events, resumable")
    watch.add_argument("--after", type=int, default=0, help="resume after this sequence")
    watch.add_argument(
        "--kind",
        action="append",
        default=[],
        choices=[
            k.removeprefix("EVENT_KIND_").lower()
            for k in events_pb2.EventKind.keys()  # noqa: SIM118
            if not k.endswith("UNSPECIFIED")
        ],
    )
    watch.add_argument("--limit", type=int, default=0, help="stop after this many events")
    watch.add_argument(
        "--retry-for",
        type=float,
        default=60.0,
        help="seconds to keep resuming an interrupted watch without progress",
    )
    watch.set_defaults(func=_run(_watch))

    from agentmem.cli import rpcs

    rpcs.add_parsers(sub, common)

    audit = sub.add_parser("audit", help="audit receipts")
    aus = audit.add_subparsers(dest="action", required=True)
    lst = aus.add_parser("list", parents=[common])
    lst.add_argument("--target", default="")
    lst.add_argument("--page-size", type=int, default=100)
    lst.add_argument("--all", action="store_true", help="follow every page")
    lst.set_defaults(func=_run(_audit_list))
    ver = aus.add_parser("verify", parents=[common])
    ver.set_defaults(func=_run(_audit_verify))


def _run(fn: Callable[[Any, argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def command(args: argparse.Namespace) -> int:
        token = os.environ.get("AGENTMEM_TOKEN", "")
        if not token:
            print("agentmem: set AGENTMEM_TOKEN to your credential", file=sys.stderr)
            return 2
        with connect(args.addr, token) as stub:
            try:
                return fn(stub, args)
            except grpc.RpcError as e:
                info = error_info(status_of_call(e))
                reason = info.reason if info else e.code().name
                print(f"agentmem: {e.code().name} {reason}: {e.details()}", file=sys.stderr)
                return 1
            except KeyboardInterrupt:
                return 130

    return command


def _print(message: Any, args: argparse.Namespace, human: str) -> None:
    if args.json:
        print(json_format.MessageToJson(message, indent=None, preserving_proto_field_name=True))
    else:
        print(human)


def _mode(value: int) -> str:
    return common_pb2.MemoryMode.Name(value).removeprefix("MEMORY_MODE_").lower()


def _capabilities(stub: Any, args: argparse.Namespace) -> int:
    r = stub.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest())
    rows = [
        f"{c.name:<20} {'enabled' if c.enabled else 'disabled'}"
        + (" (experimental)" if c.experimental else "")
        for c in r.capabilities
    ]
    policy = common_pb2.InsertPolicy.Name(r.insert_policy).removeprefix("INSERT_POLICY_").lower()
    _print(r, args, "\n".join([f"api {r.api_version}, insert policy {policy}", *rows]))
    return 0


def _thread_get(stub: Any, args: argparse.Namespace) -> int:
    r = stub.ReadThreadMemoryMode(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=args.thread_id)
    )
    at = r.effective_at.ToJsonString() if r.HasField("effective_at") else "-"
    _print(r, args, f"{r.thread_id}: {_mode(r.mode)} (revision {r.revision}, effective {at})")
    return 0


def _thread_set(stub: Any, args: argparse.Namespace) -> int:
    r = stub.SetThreadMemoryMode(
        thread_mode_pb2.SetThreadMemoryModeRequest(
            thread_id=args.thread_id,
            expected_revision=args.expected_revision,
            mode=MODES[args.mode],
        )
    )
    _print(
        r,
        args,
        f"{r.thread_id}: {_mode(r.previous_mode)} -> {_mode(r.mode)} "
        f"(revision {r.revision}, receipt {r.receipt.receipt_id})",
    )
    return 0


# A watch interrupted with one of these resumes after the last sequence it printed.
RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})


def _watch(stub: Any, args: argparse.Namespace) -> int:
    """Prints events; when the stream is cut (server restart or drain, a slow reader), it
    resumes after the last sequence printed, with backoff, for up to --retry-for seconds
    without progress: no gap, no duplicate."""
    kinds = [events_pb2.EventKind.Value("EVENT_KIND_" + k.upper()) for k in args.kind]
    position, seen, failing_since, attempt = args.after, 0, None, 0
    while True:
        request = events_pb2.WatchEventsRequest(after_sequence=position, kinds=kinds)
        try:
            for item in stub.WatchEvents(request):
                failing_since, attempt = None, 0
                _print_event(item.event, args)
                position, seen = item.event.sequence, seen + 1
                if args.limit and seen >= args.limit:
                    return 0
            return 0
        except grpc.RpcError as e:
            now = time.monotonic()
            failing_since = now if failing_since is None else failing_since
            if e.code() not in RESUMABLE or now - failing_since > args.retry_for:
                raise
            attempt += 1
            print(
                f"agentmem: watch interrupted ({e.code().name}); resuming after {position}",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(min(0.2 * 2**attempt, 5.0))  # backoff before reconnecting


def _print_event(e: Any, args: argparse.Namespace) -> None:
    payload = e.WhichOneof("payload") or "unknown"
    body = json_format.MessageToDict(getattr(e, payload), preserving_proto_field_name=True)
    if args.json:
        print(
            json.dumps(
                {"sequence": e.sequence, "at": e.at.ToJsonString(), "kind": payload, **body}
            ),
            flush=True,
        )
    else:
        print(f"{e.sequence:>8} {e.at.ToJsonString()} {payload} {json.dumps(body)}", flush=True)


def _audit_list(stub: Any, args: argparse.Namespace) -> int:
    token = ""
    while True:
        r = stub.ListAuditReceipts(
            audit_pb2.ListAuditReceiptsRequest(
                target_id=args.target, page_size=args.page_size, page_token=token
            )
        )
        for rc in r.receipts:
            _print(
                rc,
                args,
                f"{rc.sequence:>6} {rc.at.ToJsonString()} {rc.action:<24} "
                f"{rc.target_kind}/{rc.target_id}@{rc.target_revision} by {rc.principal_id}",
            )
        token = r.next_page_token
        if not token or not args.all:
            if token and not args.json:
                print("(more: --all to follow every page)")
            return 0


def _audit_verify(stub: Any, args: argparse.Namespace) -> int:
    r = stub.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest())
    state = "ok" if r.ok else f"BROKEN at sequence {r.first_invalid_sequence}"
    _print(r, args, f"audit chain {state}: {r.length} receipts, head {r.head_hash or '-'}")
    return 0 if r.ok else 1
