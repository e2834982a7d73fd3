"""What the MCP tools return: a response message as JSON a model can pass back as input.

Proto field names; 64-bit integers as JSON numbers (a revision read is a revision to send);
enum values by the short names the tools' arguments take (`MEMORY_MODE_DISABLED` is
`"disabled"`, `STATUS_PENDING_REVIEW` `"pending_review"`), an unset enum left out; every
list and scalar present even when empty (`{"hits": []}`), an unset message left out;
timestamps in RFC 3339. `output_schema` says the same of the tools' output schemas.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from agentmem.app_server.protojson import (
    descriptor_of,
    enum_prefix,
    enum_values,
    is_map,
    is_repeated,
    map_value,
)

_TIMESTAMP = "google.protobuf.Timestamp"
_INT64_AS_STRING = {"anyOf": [{"type": "string", "pattern": "^-?[0-9]+$"}, {"type": "integer"}]}


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


def fix_schema(node: Any) -> Any:
    """The generated JSON Schema of a message, saying what `to_output` sends: integers
    for int64 (enums are replaced by the caller, with `enum_schema`)."""
    if isinstance(node, list):
        return [fix_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node == _INT64_AS_STRING:
        return {"type": "integer"}
    return {key: fix_schema(value) for key, value in node.items()}


def enum_schema(enum: EnumDescriptor) -> dict[str, Any]:
    return {"type": "string", "enum": enum_values(enum)}
