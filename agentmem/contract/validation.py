"""Field checks shared by the gateway (request shape) and the runtime (domain invariants).

Each raises `INVALID_FIELD` naming the field and the rule, never echoing the value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.contract.errors import AgentmemError, invalid_field

MAX_ID_LENGTH = 128
MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 100


# Categories never visible in an id: controls (Cc), format characters (Cf: zero-width
# joiners and spaces, bidirectional overrides and isolates, the BOM, tag characters),
# surrogates, private use, unassigned code points, and line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Characters of other categories that render as nothing (or as blank space): Hangul
# fillers, the combining grapheme joiner, Khmer inherent vowels, Mongolian and other
# variation selectors, the Braille blank.
_INVISIBLE = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
    | set(range(0x180B, 0x1810))
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)


def _hidden(ch: str) -> bool:
    if " " <= ch <= "~":  # ASCII printable: the common case, decided at once
        return False
    category = unicodedata.category(ch)
    # Spaces other than U+0020 (no-break, ideographic, ...) look like it or like nothing.
    return category in _HIDDEN_CATEGORIES or category == "Zs" or ord(ch) in _INVISIBLE


def identifier(name: str, value: str, *, required: bool = True) -> str:
    """An id chosen by a caller (thread id, source id, request id, label key): 1 to 128
    visible characters. Control, format (zero-width, bidirectional) and other invisible
    characters are refused: two ids that look the same must be the same id."""
    if not value:
        if required:
            raise invalid_field(name, "must not be empty")
        return value
    if len(value) > MAX_ID_LENGTH:
        raise invalid_field(name, f"must be at most {MAX_ID_LENGTH} characters")
    if any(ch < " " or ch == "\x7f" for ch in value):
        raise invalid_field(name, "must not contain control characters or NUL bytes")
    if any(_hidden(ch) for ch in value):
        raise invalid_field(
            name, "must not contain invisible characters (format, zero-width, bidi controls)"
        )
    if value != value.strip():
        raise invalid_field(name, "must not start or end with white space")
    if not unicodedata.is_normalized("NFC", value):
        # Two spellings of one id would name two threads (a disabled one and its twin).
        raise invalid_field(name, "must be in Unicode normalization form NFC")
    return value


def is_identifier(value: str) -> bool:
    """Whether `value` passes `identifier` (for ids a caller may send but need not)."""
    try:
        identifier("id", value)
    except AgentmemError:
        return False
    return True


def non_negative(name: str, value: int) -> int:
    if value < 0:
        raise invalid_field(name, "must not be negative")
    return value


def enum_value(name: str, value: int, allowed: Iterable[int]) -> int:
    if value not in set(allowed):
        raise invalid_field(name, "must be one of the defined values (not UNSPECIFIED)")
    return value


def page_size(value: int) -> int:
    if value < 0 or value > MAX_PAGE_SIZE:
        raise invalid_field("page_size", f"must be between 0 and {MAX_PAGE_SIZE}")
    return value or DEFAULT_PAGE_SIZE


MAX_QUERY_CHARS = 2000
MAX_LIMIT = 100
MAX_TOKEN_BUDGET = 100_000


def query(value: str, name: str = "query") -> str:
    """A search text; `name` is the request's own field (`Ask` calls it `question`)."""
    if not value.strip():
        raise invalid_field(name, "must not be empty")
    if len(value) > MAX_QUERY_CHARS:
        raise invalid_field(name, f"must be at most {MAX_QUERY_CHARS} characters")
    if "\x00" in value:
        raise invalid_field(name, "must not contain NUL bytes")
    return value


_F = FieldDescriptor
_INT32, _INT64 = (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)
_UINT32, _UINT64 = (0, 2**32 - 1), (0, 2**64 - 1)
# The whole numbers each proto integer type holds; a value outside them cannot be sent.
INTEGER_RANGES: dict[int, tuple[int, int]] = {
    _F.TYPE_INT32: _INT32,
    _F.TYPE_SINT32: _INT32,
    _F.TYPE_SFIXED32: _INT32,
    _F.TYPE_UINT32: _UINT32,
    _F.TYPE_FIXED32: _UINT32,
    _F.TYPE_INT64: _INT64,
    _F.TYPE_SINT64: _INT64,
    _F.TYPE_SFIXED64: _INT64,
    _F.TYPE_UINT64: _UINT64,
    _F.TYPE_FIXED64: _UINT64,
}


def integer_range(proto_type: int) -> tuple[int, int]:
    """The lowest and highest whole number a proto integer type (`FieldDescriptor.TYPE_*`)
    holds."""
    return INTEGER_RANGES[proto_type]


def field_range(message: type[Message], name: str) -> tuple[int, int]:
    """The whole numbers the integer field `name` of the request `message` holds: its proto
    type decides (int32, int64, uint64, ...). Every surface that reads a number for a
    request (the CLI's options, the MCP tools' arguments, the console's forms, the
    app-server bridge's params) takes the range from here."""
    return integer_range(message.DESCRIPTOR.fields_by_name[name].type)


def integer(value: int | str, message: type[Message], name: str) -> int:
    """A whole number (or its decimal text) the field `name` of `message` can carry."""
    return whole_number(name, value, *field_range(message, name))


def whole_number(name: str, value: int | str, low: int, high: int) -> int:
    """A whole number (or its decimal text) from `low` to `high`."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise invalid_field(name, "must be a whole number") from None
    if not low <= number <= high:
        raise invalid_field(name, f"must be a whole number from {low} to {high}")
    return number


def in_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise invalid_field(name, f"must be between {low} and {high}")
    return value


LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a Timestamp holds
NANOS_PER_SECOND = 1_000_000_000


def timestamp(name: str, value: Timestamp) -> Timestamp:
    """A time a request gives (a Timestamp that is set): after 1970-01-01T00:00:00Z and
    before year 10000, its nanos a fraction of a second, so that it converts to
    microseconds since the epoch without error. Whether it may lie in the future is the
    runtime's rule, against its clock."""
    if not 0 <= value.seconds <= LAST_SECOND or not 0 <= value.nanos < NANOS_PER_SECOND:
        raise invalid_field(name, "must be a time between 1970 and 9999")
    if value.seconds == 0 and value.nanos < 1000:  # 0 µs: the epoch reads as "not given"
        raise invalid_field(name, "must be after 1970-01-01T00:00:00Z")
    return value
