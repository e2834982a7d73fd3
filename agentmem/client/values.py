"""Values the client's methods take: enum names, times, messages, thin pointers; and which
calls are safe to repeat. A bad value raises the client's own `InvalidArgument` naming the
field and what it accepts, before anything is sent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, cast

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.client.errors import InvalidArgument
from agentmem.contract import rpcs
from agentmem.v1 import events_pb2, foreign_pb2, sources_pb2

# The calls that are safe to repeat (the RPC table's); InsertMemory joins them when it
# carries a request_id.
IDEMPOTENT = rpcs.IDEMPOTENT


class ProtoEnum(Protocol):
    """A generated protobuf enum (its wrapper: `Name`, `Value`, `items`)."""

    def Name(self, number: int) -> str: ...

    def Value(self, name: str) -> int: ...

    def items(self) -> list[tuple[str, int]]: ...


def bad_value(field: str, allowed: Iterable[str]) -> InvalidArgument:
    """The client's refusal of a value it cannot send (the value itself is not echoed)."""
    choices = ", ".join(allowed)
    return InvalidArgument(
        f"{field} must be one of: {choices}",
        reason="INVALID_FIELD",
        metadata={"field": field},
        violations=((field, f"must be one of: {choices}"),),
    )


# A generated enum's values: its class in the generated stubs (`sources_pb2.Status`) is an
# `int` subclass whose metaclass is the `ProtoEnum` wrapper.
E = TypeVar("E", bound=int)


def enum_value(enum: type[E], prefix: str, value: str | int | None, field: str) -> E:
    """`"disabled"`, `"MEMORY_MODE_DISABLED"` or the number itself; None/"" is unspecified.
    Anything else raises `InvalidArgument` naming `field` and the allowed names."""
    # At run time a generated enum is its wrapper (an instance of EnumTypeWrapper), and its
    # values are plain ints: the casts say so, they convert nothing.
    wrapper = cast(ProtoEnum, enum)
    if value is None or value == "":
        return cast(E, 0)
    numbers = {number for _, number in wrapper.items()}
    if isinstance(value, int) and not isinstance(value, bool) and value in numbers:
        return cast(E, value)
    if isinstance(value, str):
        name = value.upper()
        name = name if name.startswith(prefix) else prefix + name
        if name in {n for n, _ in wrapper.items()} and not name.endswith("_UNSPECIFIED"):
            return cast(E, wrapper.Value(name))
    raise bad_value(field, enum_names(wrapper, prefix))


def enum_names(enum: ProtoEnum, prefix: str) -> list[str]:
    """The short lower-case names an enum accepts (`active`, `cold`)."""
    return [n.removeprefix(prefix).lower() for n, v in enum.items() if v]


def enum_members(enum: type[E], prefix: str) -> dict[str, E]:
    """Every specified value of an enum by its short lower-case name (`"cold"`)."""
    wrapper = cast(ProtoEnum, enum)
    return {n.removeprefix(prefix).lower(): cast(E, v) for n, v in wrapper.items() if v}


def enum_name(enum: ProtoEnum, prefix: str, value: int) -> str:
    """The short lower-case name of a proto enum value (`"disabled"`)."""
    return enum.Name(value).removeprefix(prefix).lower()


# The response message a call returns (the `reply` class a method hands to `_call`).
Reply = TypeVar("Reply", bound=Message)

# A time argument: a datetime (naive: UTC), an ISO 8601 date or time, or a Timestamp.
Moment = datetime | str | Timestamp | None


def timestamp(value: datetime | str | Timestamp, field: str = "time") -> Timestamp:
    """A protobuf Timestamp from a datetime (naive: UTC), an RFC 3339 string or itself."""
    if isinstance(value, Timestamp):
        return value
    try:
        # ISO 8601: a date ("2024-06-01") or a time ("2024-06-01T09:30:00Z"); UTC unless it says.
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        out = Timestamp()
        # In UTC, a time of year 1 or 9999 given in another zone may fall outside years 1-9999.
        out.FromDatetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    except (ValueError, TypeError, OverflowError):
        raise InvalidArgument(
            f"{field} must be a datetime or an ISO 8601 date or time (years 1-9999 in UTC) "
            "such as 2026-05-01 or 2026-05-01T10:00:00Z",
            reason="INVALID_FIELD",
            metadata={"field": field},
        ) from None
    return out


def message(m: sources_pb2.Message | Mapping[str, Any], index: int = 0) -> sources_pb2.Message:
    """A conversation message from {"role", "content", "name"?, "sent_at"?} (sent_at: a
    datetime or an RFC 3339 string)."""
    if isinstance(m, sources_pb2.Message):
        return m
    out = sources_pb2.Message(
        role=m.get("role", ""), content=m.get("content", ""), name=m.get("name", "")
    )
    if m.get("sent_at"):
        out.sent_at.CopyFrom(timestamp(m["sent_at"], f"messages[{index}].sent_at"))
    return out


def pointer(value: foreign_pb2.ThinPointer | Mapping[str, str]) -> foreign_pb2.ThinPointer:
    """A foreign source's thin pointer from a mapping of its fields (or itself)."""
    if isinstance(value, foreign_pb2.ThinPointer):
        return value
    return foreign_pb2.ThinPointer(**value)


def event_kinds(kinds: Iterable[str | int]) -> list[events_pb2.EventKind]:
    """Event kind filters (`"memory_inserted"`, …) as proto values."""
    return [enum_value(events_pb2.EventKind, "EVENT_KIND_", k, "kinds") for k in kinds]


def target_of(request: Message) -> str:
    """What a request is about, in ids only: used to say what was not found."""
    fields = request.DESCRIPTOR.fields_by_name
    for name, label in (("source_id", "source"), ("thread_id", "thread"), ("fact_id", "fact")):
        if name in fields and getattr(request, name):
            return f"{label} {getattr(request, name)}"
    if "key_id" in fields:
        owner, key = (getattr(request, n) for n in ("owner_id", "key_id"))
        return f"owner key {owner}/{key}"
    return ""
