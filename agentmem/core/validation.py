"""Field checks shared by the gateway (request shape) and the runtime (domain invariants).

Each raises `INVALID_FIELD` naming the field and the rule, never echoing the value.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from agentmem.core.errors import invalid_field

MAX_ID_LENGTH = 128
MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 100


def identifier(name: str, value: str, *, required: bool = True) -> str:
    """An id chosen by a caller (thread id, request id): 1 to 128 printable characters."""
    if not value:
        if required:
            raise invalid_field(name, "must not be empty")
        return value
    if len(value) > MAX_ID_LENGTH:
        raise invalid_field(name, f"must be at most {MAX_ID_LENGTH} characters")
    if any(ch < " " or ch == "\x7f" for ch in value):
        raise invalid_field(name, "must not contain control characters or NUL bytes")
    if value != value.strip():
        raise invalid_field(name, "must not start or end with white space")
    if not unicodedata.is_normalized("NFC", value):
        # Two spellings of one id would name two threads (a disabled one and its twin).
        raise invalid_field(name, "must be in Unicode normalization form NFC")
    return value


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


def query(value: str) -> str:
    if not value.strip():
        raise invalid_field("query", "must not be empty")
    if len(value) > MAX_QUERY_CHARS:
        raise invalid_field("query", f"must be at most {MAX_QUERY_CHARS} characters")
    if "\x00" in value:
        raise invalid_field("query", "must not contain NUL bytes")
    return value


def in_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise invalid_field(name, f"must be between {low} and {high}")
    return value
