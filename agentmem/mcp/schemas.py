"""Output schemas of the MCP tools: the JSON Schema of each tool's response message.

Generated from the protobuf descriptors with the same generator as
`schemas/agentmem.v1.schema.json` (agentmem.contract.schema), with proto field names, then
made to say what the tools return (`agentmem.mcp.values`): integers for int64, enums by
their short names. Only the definitions a response reaches are kept.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool
from google.protobuf.message import Message

from agentmem.contract import schema
from agentmem.mcp import values as mcp_values
from agentmem.v1 import memory_service_pb2


@functools.cache
def _bundle() -> dict[str, Any]:
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}

    def collect(fd: descriptor.FileDescriptor) -> None:
        if fd.name in files:
            return
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        for message in proto.message_type:
            _proto_names(message)
        files[fd.name] = proto
        for dep in fd.dependencies:
            collect(dep)

    collect(memory_service_pb2.DESCRIPTOR)
    defs: dict[str, Any] = schema.build(list(files.values()))["$defs"]
    pool = descriptor_pool.Default()
    for name, definition in defs.items():
        if "enum" in definition:
            defs[name] = mcp_values.enum_schema(pool.FindEnumTypeByName(name))
    fixed: dict[str, Any] = mcp_values.fix_schema(defs)
    return fixed


def _proto_names(message: descriptor_pb2.DescriptorProto) -> None:
    for field in message.field:
        field.json_name = field.name
    for nested in message.nested_type:
        _proto_names(nested)


def output_schema(message: type[Message]) -> dict[str, Any]:
    defs = _bundle()
    reached: dict[str, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.removeprefix("#/$defs/")
                if name not in reached:
                    reached[name] = defs[name]
                    walk(defs[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    root = defs[message.DESCRIPTOR.full_name]
    walk(root)
    return {**root, "$defs": dict(sorted(reached.items()))} if reached else dict(root)
