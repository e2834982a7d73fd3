"""What the client subcommands share: a command's spec (words, help, call, arguments), the
arguments several commands take, and the values they read (`--as-of`, `--expected-revision`,
a foreign source's pointer)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from google.protobuf.message import Message

from agentmem.client import Client, numbers
from agentmem.client.errors import ApiError
from agentmem.client.values import enum_names, timestamp
from agentmem.v1 import retrieval_pb2, review_pb2, sources_pb2

# One argument: its name or flag, and `add_argument`'s keyword arguments.
Arg = tuple[str, dict[str, Any]]
Call = Callable[[Client, argparse.Namespace], Message]
# (command words, help, call, arguments)
Spec = tuple[tuple[str, ...], str, Call, list[Arg]]

SAVE_INTENTS = ("explicit_user_request", "user_confirmed", "client_auto_save")
STATES = enum_names(sources_pb2.EffectiveRetrievalState, "EFFECTIVE_RETRIEVAL_STATE_")
STATUSES = enum_names(sources_pb2.Status, "STATUS_")
KINDS = enum_names(sources_pb2.SourceKind, "SOURCE_KIND_")


def pointer(a: argparse.Namespace) -> dict[str, str]:
    return {
        "uri": a.uri,
        "content_digest": a.digest,
        "media_type": a.media_type,
        "title": a.title,
        "descriptor": a.descriptor,
    }


def review(c: Client, a: argparse.Namespace) -> review_pb2.ReviewMemoryResponse:
    """Without --expected-revision, read the current revision first; a change in between
    still fails safely with REVISION_MISMATCH (and the current revision)."""
    revision = a.expected_revision
    if revision is None:
        revision = c.get_source(source_id=a.source_id).revision
    return c.review_memory(
        source_id=a.source_id,
        decision=a.decision,
        expected_revision=revision,
        note=a.note,
        request_id=a.request_id,
    )


def text_to_insert(a: argparse.Namespace) -> str:
    """`insert TEXT`, `insert -` (standard input) or `insert --file FILE` (UTF-8); a final
    newline of a file or of standard input is not part of the memory."""
    if (a.content is None) == (a.file is None):
        _usage_error("give the text, - to read it from standard input, or --file FILE")
    if a.file is not None:
        try:
            return Path(a.file).read_text(encoding="utf-8").rstrip("\n")
        except (OSError, UnicodeDecodeError) as e:
            _usage_error(f"cannot read {a.file}: {e.__class__.__name__}")
    if a.content == "-":
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")  # whatever the locale
        try:
            return stream.read().rstrip("\n")
        except UnicodeDecodeError:
            _usage_error("standard input is not UTF-8 text")
        finally:
            stream.detach()  # standard input stays open
    return str(a.content)


MESSAGE_KEYS = frozenset({"role", "content", "name", "sent_at"})


def body_to_insert(a: argparse.Namespace) -> dict[str, Any]:
    """`insert`'s body: a text (`text_to_insert`), or with `--messages FILE` a conversation,
    the file a JSON list of {"role", "content", "name"?, "sent_at"?} (as `export` writes a
    conversation's messages)."""
    if a.messages is None:
        return {"content": text_to_insert(a)}
    if a.content is not None or a.file is not None:
        _usage_error("give either a text (TEXT, - or --file) or --messages FILE, not both")
    try:
        messages = json.loads(Path(a.messages).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        _usage_error(f"cannot read {a.messages}: {e.__class__.__name__}")
    if not isinstance(messages, list) or not all(
        isinstance(m, dict)
        and {"role", "content"} <= set(m) <= MESSAGE_KEYS
        and all(isinstance(v, str) for v in m.values())
        for m in messages
    ):
        _usage_error(
            f'{a.messages} must hold a JSON list of {{"role", "content", "name", "sent_at"}} '
            "strings"
        )
    return {"messages": messages}


# `agentmem search` leaves out hits scoring under this share of the best hit's score (the
# long tail of a word matched once in a long memory); `--all` shows them.
RELATIVE_CUT = 0.2


def search(c: Client, a: argparse.Namespace) -> retrieval_pb2.SearchMemoriesResponse:
    r = c.search_memories(
        query=a.query, limit=a.limit, thread_id=a.thread, group_by_source=a.group_by_source
    )
    best = max((h.score for h in r.hits), default=0.0)
    if a.all or best <= 0:
        return r
    kept = [h for h in r.hits if h.score >= best * RELATIVE_CUT]
    left_out = len(r.hits) - len(kept)
    if left_out:
        del r.hits[:]
        r.hits.extend(kept)
        print(
            f"agentmem: left out {left_out} hit(s) scoring under {RELATIVE_CUT:.0%} of the best"
            " (--all shows them)",
            file=sys.stderr,
        )
    return r


def _usage_error(message: str) -> NoReturn:
    """A command line the command cannot use: exit code 2, as argparse's own errors."""
    print(f"agentmem: {message}", file=sys.stderr)
    raise SystemExit(2)


def moment(value: str) -> str:
    """An ISO 8601 date or time ("2024-06-01", "2024-06-01T09:30:00Z"; UTC unless it says)."""
    try:
        timestamp(value)
    except ApiError:
        raise argparse.ArgumentTypeError("expected an ISO 8601 date or time") from None
    return value


THREAD: Arg = ("--thread", {"default": "", "help": "the thread it belongs to (optional)"})
AS_OF: Arg = (
    "--as-of",
    {"type": moment, "default": None, "help": "as it was at this date or time (ISO 8601)"},
)
LIMIT: Arg = (
    "--limit",
    {
        "type": numbers.field(retrieval_pb2.SearchMemoriesRequest, "limit"),
        "default": 10,
        "help": "at most this many results (1-100)",
    },
)
PAGE_SIZE: Arg = (
    "--page-size",
    {
        "type": numbers.field(sources_pb2.ListSourcesRequest, "page_size"),
        "default": 100,
        "help": "items per page (1-1000)",
    },
)
PAGE_TOKEN: Arg = ("--page-token", {"default": "", "help": "the next page (as the last page said)"})
REQUEST_ID: Arg = (
    "--request-id",
    {"default": "", "help": "an id of yours for this change, kept in its audit receipt"},
)
SAVE_INTENT_EVIDENCE: Arg = (
    "--save-intent-evidence",
    {"default": "", "help": "a short non-sensitive note on the user's request"},
)


def label(value: str) -> tuple[str, str]:
    """`KEY=VALUE` (the value may be empty, the key may not)."""
    key, eq, text = value.partition("=")
    if not key or not eq:
        raise argparse.ArgumentTypeError("expected KEY=VALUE")
    return key, text


LABELS: Arg = (
    "--label",
    {
        "dest": "labels",
        "type": label,
        "action": "append",
        "default": [],
        "metavar": "KEY=VALUE",
        "help": "a label to keep with it (repeatable)",
    },
)
SOURCE_ID: Arg = ("source_id", {"help": "the source id (src_…)"})
# Every request's expected_revision is an int64.
REVISION = numbers.field(sources_pb2.SetSourceClassificationRequest, "expected_revision")
EXPECTED: Arg = (
    "--expected-revision",
    {"type": REVISION, "required": True, "help": "the revision you last read (compare-and-swap)"},
)
REVISION_OPT: Arg = (
    "--expected-revision",
    {
        "type": REVISION,
        "default": None,
        "help": "the revision you last read; default: read it now (a change in between "
        "still fails with REVISION_MISMATCH)",
    },
)

POINTER_ARGS: list[Arg] = [
    ("owner", {"help": "the canonical owner"}),
    ("--uri", {"required": True, "help": "where the content lives"}),
    ("--digest", {"required": True, "help": "sha256 hex of the content"}),
    ("--media-type", {"required": True, "help": "e.g. text/markdown"}),
    ("--title", {"default": "", "help": "a short title"}),
    ("--descriptor", {"default": "", "help": "a short descriptor"}),
]
