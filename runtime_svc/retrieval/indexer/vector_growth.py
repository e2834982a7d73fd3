"""Vectors of a source that grows (a conversation appended to): only its entries without a
vector of the model are embedded, and storing them keeps the vectors it has.

`without_vector` leaves out of a queued source's entry keys those whose entry already has a
vector of the model (made from the same text: an append never changes a passage it had);
`clear_for_many` deletes, before the new vectors are stored, the source's vectors of other
models and any of the entries about to be stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlalchemy import Connection, Table, delete, select, tuple_

from runtime_svc.domain import entry_keys
from runtime_svc.storage.models import MemoryVectorRow

memory_vectors = cast(Table, MemoryVectorRow.__table__)


def without_vector(
    conn: Connection, keys: dict[int, list[int]], model_id: str
) -> dict[int, list[int]]:
    """Of each source's index entry keys, those whose entry has no vector of `model_id`."""
    if not model_id or not keys:
        return keys
    have: dict[int, set[int]] = {}
    stmt = select(memory_vectors.c.source_pk, memory_vectors.c.passage).where(
        memory_vectors.c.source_pk.in_(list(keys)), memory_vectors.c.model_id == model_id
    )
    for pk, passage in conn.execute(stmt):
        have.setdefault(pk, set()).add(passage)
    return {
        pk: [k for k in found if entry_keys.passage(k) not in have.get(pk, ())]
        for pk, found in keys.items()
    }


def clear_for_many(conn: Connection, model_id: str, entries: Sequence[tuple[int, int]]) -> None:
    """For (source pk, passage) entries about to get a vector of `model_id`: their sources'
    vectors of other models, and the entries' own vectors."""
    v = memory_vectors.c
    pks = sorted({pk for pk, _ in entries})
    conn.execute(delete(memory_vectors).where(v.source_pk.in_(pks), v.model_id != model_id))
    conn.execute(
        delete(memory_vectors).where(
            v.model_id == model_id, tuple_(v.source_pk, v.passage).in_(list(entries))
        )
    )
