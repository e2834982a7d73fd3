"""The bridge's JSON shape of an agentmem.v1 message, both ways, from its descriptor.

One rule for every message, so a field or an enum value added to a proto reaches the wire
without an edit here: a field is named by its proto name in lowerCamelCase (save the few
renames the host protocol fixes, in `RENAMES`); an enum value drops its type's prefix and
is lower case (`MEMORY_MODE_DISABLED` -> "disabled", UNSPECIFIED -> null); 64-bit integers
are JSON numbers; a `Timestamp` is an RFC 3339 string; an unset message is null.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

TIMESTAMP = "google.protobuf.Timestamp"
_ANY_MESSAGE = ""
# Names the host protocol fixes where they differ from the proto's, per message full name
# ("" for every message). The one list of a list response is `data`, with `nextCursor`.
RENAMES: Mapping[str, Mapping[str, str]] = {
    _ANY_MESSAGE: {"page_token": "cursor", "page_size": "limit", "next_page_token": "nextCursor"},
    "agentmem.v1.ExplanationEntry": {"reason": "selectionOrFilterReason"},
    "agentmem.v1.SourceFilter": {"effective_state": "effectiveRetrievalState"},
    "agentmem.v1.ListSourcesResponse": {"sources": "data"},
    "agentmem.v1.SearchMemoriesResponse": {"hits": "data"},
    "agentmem.v1.ExplainRetrievalResponse": {"entries": "data"},
    "agentmem.v1.ListMemoriesResponse": {"memories": "data"},
    "agentmem.v1.SearchFactsResponse": {"facts": "data"},
    "agentmem.v1.GetProfileResponse": {"entries": "data"},
    "agentmem.v1.ListAuditReceiptsResponse": {"receipts": "data"},
}
# Strings whose empty value means "none": null on the wire (no next page: `nextCursor: null`).
EMPTY_IS_NULL = frozenset({"next_page_token"})
# Fields the bridge never carries: a foreign source's body must be empty (thin pointer only).
OMITTED: Mapping[str, frozenset[str]] = {
    "agentmem.v1.AdmitForeignSourceRequest": frozenset({"body"}),
}
_INT64 = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}


def descriptor_of(message: Message) -> Descriptor:
    return cast(Descriptor, message.DESCRIPTOR)


def message_type(field: FieldDescriptor) -> Descriptor:
    """The message type of a message field (of a map field: its entry type)."""
    if field.message_type is None:
        raise TypeError(f"{field.full_name} is not a message field")
    return field.message_type


def map_value(field: FieldDescriptor) -> FieldDescriptor:
    return message_type(field).fields_by_name["value"]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_name(message: Descriptor, field: FieldDescriptor) -> str:
    own = RENAMES.get(message.full_name, {})
    return own.get(field.name) or RENAMES[_ANY_MESSAGE].get(field.name) or camel(field.name)


def fields(message: Descriptor) -> list[FieldDescriptor]:
    """The fields the bridge carries, in declaration order."""
    omitted = OMITTED.get(message.full_name, frozenset())
    return [f for f in message.fields if f.name not in omitted]


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def is_repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def is_int64(field: FieldDescriptor) -> bool:
    return field.type in _INT64


def enum_prefix(enum: EnumDescriptor) -> str:
    return enum.values_by_number[0].name.removesuffix("UNSPECIFIED")


def enum_values(enum: EnumDescriptor) -> list[str]:
    """The wire names of an enum's values (UNSPECIFIED is null on the wire, not a name)."""
    prefix = enum_prefix(enum)
    return [v.name.removeprefix(prefix).lower() for v in enum.values if v.number != 0]


def to_json(message: Message) -> dict[str, Any]:
    """A message as the bridge sends it: every field present (null when unset)."""
    descriptor = descriptor_of(message)
    out: dict[str, Any] = {}
    for field in fields(descriptor):
        value = getattr(message, field.name)
        if is_map(field):
            value_field = map_value(field)
            out[json_name(descriptor, field)] = {
                k: _value_to_json(value_field, v) for k, v in sorted(value.items())
            }
        elif is_repeated(field):
            out[json_name(descriptor, field)] = [_value_to_json(field, v) for v in value]
        elif (field.has_presence and not message.HasField(field.name)) or (
            field.name in EMPTY_IS_NULL and not value
        ):
            out[json_name(descriptor, field)] = None
        else:
            out[json_name(descriptor, field)] = _value_to_json(field, value)
    return out


def _value_to_json(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None:
        if field.message_type.full_name == TIMESTAMP:
            return value.ToJsonString()
        return to_json(value)
    if field.enum_type is not None:
        if value == 0:
            return None
        name: str = field.enum_type.values_by_number[value].name
        return name.removeprefix(enum_prefix(field.enum_type)).lower()
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def fill(message: Message, values: Mapping[str, Any]) -> Message:
    """Sets `message`'s fields from already validated values keyed by proto field name
    (as the params models dump them); None leaves a field unset. Returns `message`."""
    descriptor = descriptor_of(message)
    for name, value in values.items():
        if value is None:
            continue
        field: FieldDescriptor = descriptor.fields_by_name[name]
        target = getattr(message, name)
        if is_map(field):
            value_field = map_value(field)
            for key, item in value.items():
                if value_field.message_type is not None:
                    fill(target[key], item)
                else:
                    target[key] = _value_from_json(value_field, item)
        elif is_repeated(field):
            for item in value:
                if field.message_type is not None:
                    _fill_message(field, target.add(), item)
                else:
                    target.append(_value_from_json(field, item))
        elif field.message_type is not None:
            _fill_message(field, target, value)
        else:
            setattr(message, name, _value_from_json(field, value))
    return message


def _fill_message(field: FieldDescriptor, target: Any, value: Any) -> None:
    if message_type(field).full_name == TIMESTAMP:
        target.FromJsonString(value)  # a Timestamp's own parser
    else:
        target.SetInParent()
        fill(target, value)


def _value_from_json(field: FieldDescriptor, value: Any) -> Any:
    if field.enum_type is not None:
        prefix = enum_prefix(field.enum_type)
        return field.enum_type.values_by_name[prefix + str(value).upper()].number
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64decode(value)
    return value
