"""Responses as people read them (the CLI's default output; `--json` is for scripts).

Driven by the message descriptors, so a new field shows without code here: a write is one
short line (what was done, to what, what changed; the receipt only when asked), a list is a
table with aligned columns, enum values are short lower-case names (`cold`, `eligible`),
scores are rounded, times are relative ("5 min ago"), empty fields are left out. Characters
a person cannot see (bidi controls, zero-width, tag characters) are written as `U+XXXX`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias

from google.protobuf import descriptor
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.contract.invisible import shown
from agentmem.v1 import common_pb2

if TYPE_CHECKING:
    from google._upb import _message as upb

# Descriptors as generated messages give them: the C implementation's or the Python one's.
Field: TypeAlias = "descriptor.FieldDescriptor | upb.FieldDescriptor"
MessageType: TypeAlias = "descriptor.Descriptor | upb.Descriptor"
EnumType: TypeAlias = "descriptor.EnumDescriptor | upb.EnumDescriptor"

# What a write did, by command words.
VERBS = {
    ("insert",): "saved",
    ("sources", "classify"): "classified",
    ("sources", "revoke"): "revoked",
    ("sources", "erase"): "erased",
    ("memories", "review"): "reviewed",
    ("policy", "set"): "set the insert policy",
    ("thread-mode", "set"): "set memory for thread",
    ("owner-key", "register"): "registered owner key",
    ("owner-key", "revoke"): "revoked owner key",
    ("foreign", "admit"): "admitted",
    ("foreign", "revoke-assent"): "revoked the assent of",
}
ID_FIELDS = ("source_id", "thread_id", "owner_id", "key_id", "fact_id")
# Shorter column names.
HEADERS = {
    "source_id": "source",
    "source_kind": "kind",
    "effective_retrieval_state": "state",
    "save_intent_source": "intent source",
    "source_revision": "rev",
    "revision": "rev",
    "received_at": "received",
    "created_at": "created",
    "updated_at": "updated",
    "thread_id": "thread",
    "derivative_id": "derivative",
    "prompt_record_id": "prompt record",
    "total_matches": "matches",
}
# Long text goes in the last column, unpadded.
TEXT_FIELDS = frozenset({"snippet", "statement", "content", "context", "answer", "descriptor"})
SECOND, MINUTE, HOUR, DAY = 1, 60, 3600, 86400
_TIMESTAMP = Timestamp.DESCRIPTOR.full_name
_PASSAGE = "agentmem.v1.Passage"


def relative(ts: Timestamp, now: float | None = None) -> str:
    """`12 s ago`, `5 min ago`, `3 h ago`, `2 days ago`, `in 5 min`; a date past 30 days."""
    seconds = ts.seconds + ts.nanos / 1e9
    delta = (time.time() if now is None else now) - seconds
    ahead, delta = delta < 0, abs(delta)
    if delta > 30 * DAY:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")
    if delta < 2:
        return "just now"
    for size, unit in ((DAY, " days"), (HOUR, " h"), (MINUTE, " min"), (SECOND, " s")):
        if delta >= size:
            amount = f"{int(delta // size)}{unit}"
            if amount == "1 days":
                amount = "1 day"
            return f"in {amount}" if ahead else f"{amount} ago"
    return "just now"  # pragma: no cover


def short(enum: EnumType, number: int) -> str:
    """`CLASSIFICATION_COLD` → `cold`: the name the CLI's own flags take."""
    value = enum.values_by_number.get(number)
    if value is None:
        return str(number)
    prefix = _enum_prefix(enum)
    return value.name.removeprefix(prefix).lower()


def _enum_prefix(enum: EnumType) -> str:
    names = [v.name for v in enum.values]
    first = names[0]
    cut = first.rfind("_UNSPECIFIED")
    return first[: cut + 1] if cut > 0 else ""


def value(field: Field, raw: Any) -> str:
    """One field's value as text ("" when it is the default, so it is left out)."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        return short(field.enum_type, raw) if raw and field.enum_type is not None else ""
    if (
        field.message_type is not None
        and field.message_type.full_name == Timestamp.DESCRIPTOR.full_name
    ):
        return relative(raw) if raw.seconds or raw.nanos else ""
    if _is_map(field):
        return shown(", ".join(f"{k}={v}" for k, v in sorted(raw.items())))
    if field.message_type is not None and field.message_type.full_name == _PASSAGE:
        return passage(raw) if raw.ByteSize() else ""
    if field.message_type is not None:
        return (
            "  ".join(f"{_words(f.name)} {t}" for f, t in _scalars(raw)) if raw.ByteSize() else ""
        )
    if isinstance(raw, bool):
        return "yes" if raw else ""
    if isinstance(raw, float):
        return f"{raw:.2f}" if raw else ""
    return shown(str(raw)) if raw else ""


def passage(p: Any) -> str:
    """A conversation's passage as people count messages (from 1): `messages 13-14`,
    `message 2 chars 2338-3502` (a part of a long message)."""
    first, last = p.message_start + 1, p.message_end + 1
    if p.char_end > p.char_start:
        return f"message {first} chars {p.char_start + 1}-{p.char_end}"
    return f"message {first}" if first == last else f"messages {first}-{last}"


def _is_map(field: Field) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _repeated(field: Field) -> bool:
    return field.is_repeated and not _is_map(field)


def _words(name: str) -> str:
    return HEADERS.get(name, name.replace("_", " "))


# Shown even at 0: a revision read is the revision to send (`policy get` before any
# override is at revision 0, and `policy set --expected-revision 0` needs it).
SHOWN_AT_ZERO = frozenset({"revision"})


def _scalars(message: Message, skip: Sequence[str] = ()) -> list[tuple[Field, str]]:
    """The fields of a message that are not lists, as text, empty ones left out (a
    revision excepted)."""
    out: list[tuple[Field, str]] = []
    for field in message.DESCRIPTOR.fields:
        if field.name in skip or _repeated(field):
            continue
        text = value(field, getattr(message, field.name))
        if not text and field.name in SHOWN_AT_ZERO and field.message_type is None:
            text = "0"
        if text:
            out.append((field, text))
    return out


def _plain(field: Field) -> bool:
    """A field a table cell can show: not a list, not a nested message (times excepted)."""
    if _repeated(field):
        return False
    message = field.message_type
    return message is None or _is_map(field) or message.full_name in (_TIMESTAMP, _PASSAGE)


def count(n: int, plural: str) -> str:
    """`1 hit`, `2 hits`, `1 entry`, `no memories`."""
    if n == 0:
        return f"no {plural}"
    if n > 1:
        return f"{n} {plural}"
    if plural.endswith("ies"):
        return f"1 {plural[:-3]}y"
    return f"1 {plural.removesuffix('s')}"


def table(rows: Sequence[Message], message_type: MessageType) -> list[str]:
    """Aligned columns of the items' fields that any row sets; long text last."""
    fields = [f for f in message_type.fields if _plain(f)]
    cells = [{f.name: value(f, getattr(r, f.name)) for f in fields} for r in rows]
    used = [f for f in fields if any(c[f.name] for c in cells)]
    used.sort(key=lambda f: f.name in TEXT_FIELDS)
    heads = [_words(f.name) for f in used]
    widths = [
        max(len(h), *(len(c[f.name]) for c in cells)) for h, f in zip(heads, used, strict=True)
    ]

    def line(parts: Sequence[str]) -> str:
        return "  ".join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip()

    return [line(heads)] + [line([c[f.name] for f in used]) for c in cells]


def write(message: Message, command: tuple[str, ...], receipt: bool = False) -> list[str]:
    """A write in one line: what was done to what, and what it changed."""
    verb = VERBS.get(command, " ".join(command))
    names = [f for f in ID_FIELDS if f in message.DESCRIPTOR.fields_by_name]
    target = "/".join(str(getattr(message, f)) for f in names if getattr(message, f))
    fields = dict(_scalars(message, skip=(*ID_FIELDS, "receipt", "effective_at")))
    by_name = {f.name: t for f, t in fields.items()}
    parts = []
    for field, text in fields.items():
        if field.name.startswith("previous_"):
            continue
        before = by_name.get(f"previous_{field.name}")
        parts.append(
            f"{_words(field.name)} {before} → {text}" if before else f"{_words(field.name)} {text}"
        )
    line = f"{verb} {target}".strip() + (f" ({', '.join(parts)})" if parts else "")
    out = [line]
    r = getattr(message, "receipt", None)
    if receipt and isinstance(r, common_pb2.AuditReceipt) and message.HasField("receipt"):
        out.append(f"receipt {r.receipt_id} #{r.sequence} hash {r.hash}")
    return out


def read(message: Message) -> list[str]:
    """A read: its fields as aligned `name  value` lines, lists as tables, long text as
    blocks; an empty list says so."""
    out: list[str] = []
    pairs = _scalars(message, skip=("next_page_token",))
    blocks = [(f, t) for f, t in pairs if "\n" in t or f.name in TEXT_FIELDS]
    lines = [(f, t) for f, t in pairs if (f, t) not in blocks]
    width = max((len(_words(f.name)) for f, _ in lines), default=0)
    out += [f"{_words(f.name).ljust(width)}  {t}" for f, t in lines]
    for field in message.DESCRIPTOR.fields:
        if not _repeated(field):
            continue
        items = list(getattr(message, field.name))
        if field.message_type is None:
            if items:
                out.append(f"{_words(field.name)}: {', '.join(map(str, items))}")
            continue
        if not items and lines:  # an object's empty list says nothing
            continue
        out.append(count(len(items), _words(field.name)))
        if items:
            out += ["  " + row for row in table(items, field.message_type)]
    for field, text in blocks:
        out += [f"{_words(field.name)}:", *("  " + t for t in text.splitlines())]
    token = getattr(message, "next_page_token", "")
    if token:
        out.append(f"more: --page-token {token}")
    return out


def show(message: Message, command: tuple[str, ...], receipt: bool = False) -> list[str]:
    """The lines to print for a response (a write when it carries a receipt)."""
    fields = message.DESCRIPTOR.fields_by_name
    if "receipt" in fields and message.HasField("receipt"):
        return write(message, command, receipt)
    return read(message)
