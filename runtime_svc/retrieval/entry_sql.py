"""The entry key's packing as SQL (`runtime_svc.domain.entry_keys`), for statements that
group or join an entry to its source."""

from __future__ import annotations

from sqlalchemy import BigInteger, literal_column
from sqlalchemy.sql import ColumnElement

from runtime_svc.domain.entry_keys import SOURCE_SHIFT


def source_of(key: ColumnElement[int]) -> ColumnElement[int]:
    """The source pk of an entry key column (`entry_keys.source_pk`)."""
    # A literal shift: PostgreSQL's `>>` takes an integer (not bigint) on its right.
    return key.op(">>", return_type=BigInteger)(literal_column(str(SOURCE_SHIFT)))
