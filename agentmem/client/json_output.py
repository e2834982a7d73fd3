"""A response message as JSON for scripts and models: what `agentmem --json` prints and the
MCP tools return, one shape for both.

Proto field names; 64-bit integers as JSON numbers (a revision read is a revision to send);
enum values by their short names (`MEMORY_MODE_DISABLED` is `"disabled"`,
`STATUS_PENDING_REVIEW` `"pending_review"`), an unset enum left out; every list and scalar
present even when empty (`{"hits": []}`), an unset message left out; timestamps in RFC 3339.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from agentmem.client.protojson import descriptor_of, enum_prefix, is_map, is_repeated, map_value

_TIMESTAMP = "google.protobuf.Timestamp"


def to_output(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in descriptor_of(message).fields:
        value = getattr(message, field.name)
        if is_map(field):
            value_field = map_value(field)
            out[field.name] = {k: _one(value_field, v) for k, v in sorted(value.items())}
        elif is_repeated(field):
            out[field.name] = [_one(field, v) for v in value]
        elif not _unset(message, field, value):
            out[field.name] = _one(field, value)
    return out


def _unset(message: Message, field: FieldDescriptor, value: Any) -> bool:
    """An unset message or optional scalar, or an unspecified enum: left out."""
    if field.has_presence:
        return not message.HasField(field.name)
    return field.enum_type is not None and value == 0


def _one(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None:
        if field.message_type.full_name == _TIMESTAMP:
            return value.ToJsonString()
        return to_output(value)
    if field.enum_type is not None:
        return short_name(field.enum_type, value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def short_name(enum: EnumDescriptor, number: int) -> str | None:
    if number == 0 or number not in enum.values_by_number:
        return None
    return enum.values_by_number[number].name.removeprefix(enum_prefix(enum)).lower()
