"""JSON Schema of every public message, generated from the protobuf descriptors.

The schema follows the proto3 JSON mapping that `google.protobuf.json_format` speaks:
lowerCamelCase names, 64-bit integers as decimal strings (numbers are accepted too), enums
by name, `Timestamp` as an RFC 3339 string. One bundle per public package, with a `$defs`
entry per message and enum, is kept in `schemas/` and checked for staleness by a test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

PUBLIC_PACKAGE = "agentmem.v1"
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS: dict[int, dict[str, Any]] = {
    _F.TYPE_STRING: {"type": "string"},
    _F.TYPE_BOOL: {"type": "boolean"},
    _F.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
    _F.TYPE_DOUBLE: {"type": "number"},
    _F.TYPE_FLOAT: {"type": "number"},
    **{t: {"type": "integer"} for t in (_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32)},
    **{t: {"type": "integer", "minimum": 0} for t in (_F.TYPE_UINT32, _F.TYPE_FIXED32)},
    **{
        t: {"anyOf": [{"type": "string", "pattern": "^-?[0-9]+$"}, {"type": "integer"}]}
        for t in (_F.TYPE_INT64, _F.TYPE_SINT64, _F.TYPE_SFIXED64, _F.TYPE_UINT64, _F.TYPE_FIXED64)
    },
}
_WELL_KNOWN = {
    ".google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    ".google.protobuf.Duration": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"},
}


def build(
    files: list[descriptor_pb2.FileDescriptorProto], package: str = PUBLIC_PACKAGE
) -> dict[str, Any]:
    """The bundle for one package: every message and enum of it under `$defs`."""
    defs: dict[str, dict[str, Any]] = {}
    for file in files:
        if file.package != package:
            continue
        for enum in file.enum_type:
            defs[f"{package}.{enum.name}"] = _enum(enum)
        for message in file.message_type:
            _collect_message(message, f"{package}.{message.name}", defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{package}.schema.json",
        "title": f"{package} messages (proto3 JSON mapping)",
        "$defs": dict(sorted(defs.items())),
    }


def _collect_message(
    message: descriptor_pb2.DescriptorProto, name: str, defs: dict[str, Any]
) -> None:
    for enum in message.enum_type:
        defs[f"{name}.{enum.name}"] = _enum(enum)
    maps = {}
    for nested in message.nested_type:
        if nested.options.map_entry:
            maps[f".{name}.{nested.name}"] = nested
        else:
            _collect_message(nested, f"{name}.{nested.name}", defs)
    properties = {}
    for field in message.field:
        properties[field.json_name] = _field(field, maps)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    oneofs = _oneof_groups(message)
    if oneofs:
        schema["allOf"] = [
            {"not": {"required": pair}} for group in oneofs for pair in _pairs(group)
        ]
    defs[name] = schema


def _oneof_groups(message: descriptor_pb2.DescriptorProto) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            groups.setdefault(field.oneof_index, []).append(field.json_name)
    return [g for g in groups.values() if len(g) > 1]


def _pairs(names: list[str]) -> list[list[str]]:
    return [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]


def _field(field: descriptor_pb2.FieldDescriptorProto, maps: dict[str, Any]) -> dict[str, Any]:
    if field.type_name in maps:
        entry = maps[field.type_name]
        return {"type": "object", "additionalProperties": _single(entry.field[1])}
    single = _single(field)
    if field.label == _F.LABEL_REPEATED:
        return {"type": "array", "items": single}
    return single


def _single(field: descriptor_pb2.FieldDescriptorProto) -> dict[str, Any]:
    if field.type in _SCALARS:
        return dict(_SCALARS[field.type])
    if field.type_name in _WELL_KNOWN:
        return dict(_WELL_KNOWN[field.type_name])
    return {"$ref": f"#/$defs/{field.type_name.lstrip('.')}"}


def _enum(enum: descriptor_pb2.EnumDescriptorProto) -> dict[str, Any]:
    return {"type": "string", "enum": [v.name for v in enum.value]}


def write_from_descriptor_set(data: bytes, out_dir: Path) -> Path:
    files = descriptor_pb2.FileDescriptorSet.FromString(data).file
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{PUBLIC_PACKAGE}.schema.json"
    path.write_text(json.dumps(build(list(files)), indent=2, sort_keys=False) + "\n")
    return path
