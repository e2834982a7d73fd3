"""What the MCP tools return: a response message as JSON a model can pass back as input
(`agentmem.client.json_output`, the shape `agentmem --json` prints too); the output schemas here
say the same of it.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import EnumDescriptor

from agentmem.client.json_output import short_name, to_output
from agentmem.client.protojson import enum_values

__all__ = ["enum_schema", "fix_schema", "short_name", "to_output"]
_INT64_AS_STRING = {"anyOf": [{"type": "string", "pattern": "^-?[0-9]+$"}, {"type": "integer"}]}


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
