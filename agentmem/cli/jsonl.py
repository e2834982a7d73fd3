"""The memory JSON Lines format that `agentmem export` writes and `agentmem import` reads.

One JSON object per line:

    {"source_id": "src_…", "revision": 1, "source_kind": "memory", "status": "active",
     "classification": "active", "thread_id": "chat-7", "labels": {"topic": "boats"},
     "save_intent": "explicit_user_request", "save_intent_source": "opencode",
     "save_intent_evidence": "User said: remember this", "inserted_by": "alice",
     "received_at": "2026-…Z", "observed_at": "2026-…Z", "content": "I have a red kayak"}

Import needs `content` (a string) or `messages` (a list of {"role", "content"} with optional
"name" and "sent_at", an RFC 3339 time), and takes `thread_id`, `source_kind` (memory |
conversation), `save_intent`, `save_intent_source`, `save_intent_evidence`, `labels` (an
object of strings), `request_id`, `classification` (active | cold), `status` and
`observed_at` (RFC 3339: when it was said or true; default `received_at`, the time the
first server received it). The observed time decides which fact is current, so an export
writes it (`Memory.observed_at`) and an import sends it with the insert where the server's
API has the field (`InsertMemoryRequest.observed_at`), else keeps it in the file only. The
other export fields (`revision`, `inserted_by`, `reviewed_by`, `reviewed_at`) are accepted
and ignored; any other key makes the line bad, so a typo is not silently dropped.

Ids are re-minted: the target mints its own source ids and revisions. A line is known on
the server it is imported into by its `source_id` (the server it came from still holds that
source) and by its insert's request id: the line's own `request_id`, else
`import-<source_id>`, else one made of what the line says, so the same line is never
stored twice by the same person wherever the file is read from. `classification: cold` is
applied again after the insert. Only `status: active` memories are imported; pending and
rejected ones are skipped (their review decision belongs to the server they came from) and
counted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.client.methods import enum_name
from agentmem.v1 import review_pb2, sources_pb2

STRING_FIELDS = (
    "content",
    "thread_id",
    "save_intent",
    "save_intent_source",
    "save_intent_evidence",
    "request_id",
    "source_id",
)
IGNORED_FIELDS = frozenset({"revision", "inserted_by", "reviewed_by", "reviewed_at"})
TIME_FIELDS = ("observed_at", "received_at")
KNOWN_FIELDS = frozenset(
    {*STRING_FIELDS, *IGNORED_FIELDS, *TIME_FIELDS, "messages", "labels", "source_kind"}
    | {"classification", "status"}
)
MESSAGE_FIELDS = frozenset({"role", "content", "name", "sent_at"})
# Whether inserts can carry the observed time (InsertMemoryRequest.observed_at).
OBSERVED_AT = "observed_at" in sources_pb2.InsertMemoryRequest.DESCRIPTOR.fields_by_name


class BadLine(ValueError):
    """A line that cannot be imported; the message never quotes the line's text."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(f"line {number}: {reason}")
        self.number = number


@dataclass
class Line:
    number: int
    insert: dict[str, Any] = field(default_factory=dict)  # insert_memory keyword arguments
    cold: bool = False
    skip_status: str = ""  # non-empty: not imported, with this status
    observed_at: str = ""  # RFC 3339, "" when the line gives no time
    source_id: str = ""  # the source it was exported from ("" for a line written by hand)


def export_line(memory: review_pb2.Memory) -> str:
    data: dict[str, Any] = {
        "source_id": memory.source_id,
        "revision": memory.revision,
        "source_kind": enum_name(sources_pb2.SourceKind, "SOURCE_KIND_", memory.source_kind),
        "status": enum_name(sources_pb2.Status, "STATUS_", memory.status),
        "classification": enum_name(
            sources_pb2.Classification, "CLASSIFICATION_", memory.classification
        ),
    }
    for name in (
        "thread_id",
        "save_intent",
        "save_intent_source",
        "save_intent_evidence",
        "inserted_by",
        "reviewed_by",
    ):
        if getattr(memory, name):
            data[name] = getattr(memory, name)
    if memory.labels:
        data["labels"] = dict(sorted(memory.labels.items()))
    for name in ("observed_at", "received_at", "reviewed_at"):
        if name in memory.DESCRIPTOR.fields_by_name and memory.HasField(name):
            data[name] = getattr(memory, name).ToJsonString()
    if memory.content:
        data["content"] = memory.content
    if memory.messages:
        data["messages"] = [
            json_format.MessageToDict(m, preserving_proto_field_name=True) for m in memory.messages
        ]
    return json.dumps(data, ensure_ascii=False)


def decode(number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine(number, "not UTF-8") from None


def parse_line(number: int, text: str) -> Line:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadLine(number, f"invalid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(record, dict):
        raise BadLine(number, "not a JSON object")
    unknown = sorted(set(record) - KNOWN_FIELDS)
    if unknown:
        raise BadLine(number, f"unknown field(s) {', '.join(unknown)}")
    for name in STRING_FIELDS:
        if name in record and not isinstance(record[name], str):
            raise BadLine(number, f"{name} must be a string")
    line = Line(number)
    status = record.get("status", "active")
    if status not in ("active", "pending_review", "rejected"):
        raise BadLine(number, "status must be active, pending_review or rejected")
    classification = record.get("classification", "active")
    if classification not in ("active", "cold"):
        raise BadLine(number, "classification must be active or cold")
    kind = record.get("source_kind", "")
    if kind not in ("", "memory", "conversation"):
        raise BadLine(number, "source_kind must be memory or conversation")
    messages = record.get("messages", [])
    if not isinstance(messages, list) or not all(
        isinstance(m, dict)
        and set(m) <= MESSAGE_FIELDS
        and all(isinstance(v, str) for v in m.values())
        for m in messages
    ):
        raise BadLine(
            number, 'messages must be a list of {"role", "content", "name", "sent_at"} strings'
        )
    for i, m in enumerate(messages):
        if "sent_at" in m:
            _time(number, f"messages[{i}].sent_at", m["sent_at"])
    observed = {name: _time(number, name, record[name]) for name in TIME_FIELDS if name in record}
    labels = record.get("labels", {})
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise BadLine(number, "labels must be an object of strings")
    if bool(record.get("content")) == bool(messages):
        raise BadLine(
            number,
            "needs exactly one of content and messages "
            "(an export made without memory.content.read has neither)",
        )
    line.skip_status = "" if status == "active" else status
    line.observed_at = observed.get("observed_at") or observed.get("received_at", "")
    line.cold = classification == "cold"
    line.source_id = record.get("source_id", "")
    request_id = record.get("request_id") or (
        f"import-{line.source_id}" if line.source_id else f"import-{_digest(record)}"
    )
    line.insert = {
        "content": record.get("content", ""),
        "messages": messages,
        "thread_id": record.get("thread_id", ""),
        "source_kind": kind or None,
        "save_intent": record.get("save_intent", ""),
        "save_intent_source": record.get("save_intent_source", ""),
        "save_intent_evidence": record.get("save_intent_evidence", ""),
        "labels": labels,
        "request_id": request_id,
    }
    if OBSERVED_AT and line.observed_at:
        line.insert["observed_at"] = line.observed_at
    return line


def _time(number: int, name: str, value: object) -> str:
    """An RFC 3339 time as given (checked), e.g. 2026-05-01T10:00:00Z."""
    if not isinstance(value, str):
        raise BadLine(number, f"{name} must be an RFC 3339 time string")
    try:
        Timestamp().FromJsonString(value)
    except ValueError:
        raise BadLine(
            number, f"{name} must be an RFC 3339 time, e.g. 2026-05-01T10:00:00Z"
        ) from None
    return value


def _digest(record: dict[str, Any]) -> str:
    """What a line says, whatever its place in whichever file: the same line read again
    (from a copy, or twice in one file) makes the same request id."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]
