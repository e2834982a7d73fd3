"""Pydantic models of the bridge's messages, made from the proto descriptors.

A method's params model validates what a host sends before anything reaches the gateway
(-32602 when it does not parse); the params, result and notification models are also what
the JSON Schemas and the TypeScript types are generated from. Every model's fields are its
message's, named by `protojson`, so the validation, the schemas and the wire cannot drift
apart, and a field added to a proto needs no edit here.

Params fields are optional (proto3: absent means the default) unless the method names them
required; result fields are always present, null where the message leaves them unset. A
message reached from both directions (a conversation `Message`) gets two models, the
params one named `...Input`, since their required fields differ.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from types import GenericAlias
from typing import Annotated, Any, Literal, cast

from google.protobuf import timestamp_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    create_model,
)

from agentmem.client import protojson
from agentmem.contract import validation

Direction = Literal["params", "result"]
_F = FieldDescriptor
# Params members the bridge does not know are ignored, as Codex's server does.
PARAMS_CONFIG = ConfigDict(extra="ignore", use_enum_values=True, protected_namespaces=())
# Results may gain fields in a later version: hosts should ignore what they do not know.
RESULT_CONFIG = ConfigDict(use_enum_values=True, protected_namespaces=())


def _rfc3339(value: str) -> str:
    timestamp_pb2.Timestamp().FromJsonString(value)  # ValueError when it is not one
    return value


Rfc3339 = Annotated[
    StrictStr,
    AfterValidator(_rfc3339),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def type_name(method: str) -> str:
    """`thread/memoryMode/set` -> `ThreadMemoryModeSet` (a schema and TypeScript name)."""
    return "".join(part[:1].upper() + part[1:] for part in method.split("/"))


class Registry:
    """The models made so far, one per (message, direction), and the enums."""

    def __init__(self) -> None:
        self._nested: dict[tuple[str, Direction], type[BaseModel]] = {}
        self._enums: dict[str, type[enum.Enum]] = {}
        self._result_messages: set[str] = set()

    def top(
        self,
        name: str,
        message: Descriptor,
        direction: Direction,
        *,
        doc: str = "",
        required: Iterable[str] = (),
        defaults: Mapping[str, Any] | None = None,
        omit: Iterable[str] = (),
        extra: Mapping[str, tuple[Any, Any]] | None = None,
    ) -> type[BaseModel]:
        """The params or result model of a method (or a notification's params)."""
        skip = frozenset(omit)
        definitions = {
            field.name: self._field(message, field, direction, frozenset(required), defaults or {})
            for field in protojson.fields(message)
            if field.name not in skip
        }
        return self._make(name, direction, doc, {**definitions, **(extra or {})})

    def nested(self, message: Descriptor, direction: Direction) -> type[BaseModel]:
        key = (message.full_name, direction)
        if key not in self._nested:
            if direction == "result":
                if (message.full_name, "params") in self._nested:
                    raise RuntimeError(f"make result models first ({message.full_name})")
                self._result_messages.add(message.full_name)
            name = message.name
            if direction == "params" and message.full_name in self._result_messages:
                name += "Input"
            self._nested[key] = self.top(name, message, direction)
        return self._nested[key]

    def enum(self, descriptor: EnumDescriptor) -> type[enum.Enum]:
        if descriptor.full_name not in self._enums:
            values = {v: v for v in protojson.enum_values(descriptor)}
            # An enum whose name and members come from the descriptor at run time.
            made = enum.Enum(descriptor.name, values, type=str)  # type: ignore[misc]  # named at run time
            self._enums[descriptor.full_name] = cast("type[enum.Enum]", made)
        return self._enums[descriptor.full_name]

    def _make(
        self, name: str, direction: Direction, doc: str, fields: dict[str, tuple[Any, Any]]
    ) -> type[BaseModel]:
        for field_name in fields:
            if hasattr(BaseModel, field_name):  # would shadow pydantic's own attribute
                raise RuntimeError(f"{name}.{field_name} cannot be a model field")
        config = PARAMS_CONFIG if direction == "params" else RESULT_CONFIG
        # The field definitions are made at run time, from the descriptor: the checker
        # cannot tell them from create_model's own `__`-keywords, so it is called untyped.
        make: Callable[..., type[BaseModel]] = create_model
        return make(name, __config__=config, __doc__=doc, **fields)

    def _field(
        self,
        message: Descriptor,
        field: FieldDescriptor,
        direction: Direction,
        required: frozenset[str],
        defaults: Mapping[str, Any],
    ) -> tuple[Any, Any]:
        alias = protojson.json_name(message, field)
        if protojson.is_map(field):
            value = protojson.map_value(field)
            kind: Any = GenericAlias(dict, (StrictStr, self._single(value, direction)))
        elif protojson.is_repeated(field):
            kind = GenericAlias(list, (self._single(field, direction),))
        else:
            kind = self._single(field, direction)
        if direction == "params":
            if field.name in required:
                return kind, Field(alias=alias)
            return kind | None, Field(default=defaults.get(field.name), alias=alias)
        nullable = not protojson.is_repeated(field) and (
            field.message_type is not None
            or field.enum_type is not None
            or field.has_presence
            or field.name in protojson.EMPTY_IS_NULL
        )
        return (kind | None if nullable else kind), Field(alias=alias)

    def _single(self, field: FieldDescriptor, direction: Direction) -> Any:
        if field.message_type is not None:
            if field.message_type.full_name == protojson.TIMESTAMP:
                return Rfc3339
            return self.nested(field.message_type, direction)
        if field.enum_type is not None:
            return self.enum(field.enum_type)
        if field.type in validation.INTEGER_RANGES:
            if direction == "result":
                return int
            low, high = validation.integer_range(field.type)  # what the proto field can hold
            return Annotated[StrictInt, Field(ge=low, le=high)]
        if field.type == _F.TYPE_BOOL:
            return StrictBool
        if field.type in (_F.TYPE_DOUBLE, _F.TYPE_FLOAT):
            return StrictFloat  # accepts integers too
        return StrictStr  # string, and bytes as base64
