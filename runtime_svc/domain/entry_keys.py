"""An index entry's key: which source it belongs to and which of its passages it is, packed
in one integer (the only module that knows how).

The source's pk takes the high bits and the passage's message range the low 24 bits (0 for
a whole-text entry): the range's first message in 18 bits and its length in 6, so a
conversation may hold up to `MAX_MESSAGES` messages (a session that grows by appends) and a
passage up to `MAX_SPAN` of them. An entry belongs to exactly one source, a source's
entries are one contiguous key range (`KeyRange`), and a passage's range is read back from
the key itself. A vector stores the low bits as its `passage`; `with_passage` makes the key
again. Keys stay below 2**63 for source pks below 2**39.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NewType

from runtime_svc.domain.passages import Range
from runtime_svc.domain.sources import MAX_MESSAGES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EntryKey = NewType("EntryKey", int)

_SHIFT = 24
_LOW = (1 << _SHIFT) - 1
_SPAN_BITS = 6
_SPAN = (1 << _SPAN_BITS) - 1
MAX_SPAN: Final = _SPAN  # messages in one passage
# The SQL rendering of `source_pk` (`runtime_svc.retrieval.entry_sql.source_of`) shifts by this.
SOURCE_SHIFT: Final = _SHIFT
assert MAX_MESSAGES < 1 << (_SHIFT - _SPAN_BITS)  # a range's first message fits its bits


@dataclass(frozen=True)
class KeyRange:
    """Every entry key of one source: `first` to `last`, inclusive."""

    first: int
    last: int


def entry_key(source_pk: int, rng: Range | None = None) -> EntryKey:
    if rng is None:
        return EntryKey(source_pk << _SHIFT)
    span = rng.end - rng.start + 1
    if not 0 <= rng.start <= MAX_MESSAGES or not 1 <= span <= _SPAN:
        raise ValueError("a passage's range does not fit an entry key")
    return EntryKey((source_pk << _SHIFT) | (rng.start << _SPAN_BITS) | span)


def with_passage(source_pk: int, passage: int) -> EntryKey:
    """The key of a source's entry from its low bits (a vector's `passage`)."""
    return EntryKey((source_pk << _SHIFT) | passage)


def source_pk(key: int) -> int:
    return key >> _SHIFT


def source_pks(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """`source_pk` of each key of an array."""
    return keys >> _SHIFT


def passage(key: int) -> int:
    """The key's low bits: 0 for a whole-text entry, else its message range."""
    return key & _LOW


def range_of(key: int) -> Range | None:
    low = key & _LOW
    if not low:
        return None
    start = low >> _SPAN_BITS
    return Range(start, start + (low & _SPAN) - 1)


def key_range(source_pk: int) -> KeyRange:
    return KeyRange(source_pk << _SHIFT, (source_pk << _SHIFT) | _LOW)
