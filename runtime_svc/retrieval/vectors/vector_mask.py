"""Which held vectors may take a place in the semantic side's shortlist: a flag per held row
(`HeldRows.ok`), applied inside the first pass before its top n is taken
(`quantized.shortlist`), so that the vectors of cold, pending, rejected, revoked or
erased sources never take an eligible one's place.

The flag follows the entry's row in the lexical index (the empty word's, `search_postings`
with `term = ''`): its `eligible` flag (eligibility regardless of time) and its stamp (the
tenant's count of index changes as the change left it, `tenant_state.index_stamp`). What is
held is brought up to the caller's transaction at every use: the entries stamped since are
read and their rows' flags set; a vector with no entry row (its source revoked or erased:
both remove the entry and the vectors) is not eligible; and when a stamp was taken that no
entry row holds (a removal takes one), a count of the tenant's vectors finds vectors deleted
since (their rows are then dropped). A
time-dependent rule (an assent's expiry) is left to the check of the shortlist's sources,
which stays the authority (`retrieval.take`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, bindparam, func, literal_column, select
from sqlalchemy.sql.elements import ColumnClause

from runtime_svc.storage.models import MemoryVectorRow, SearchPosting, TenantState
from runtime_svc.storage.read_rows import driver_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from runtime_svc.retrieval.vectors.signature_rows import HeldRows

    Array = NDArray[Any]

postings = SearchPosting.__table__
_v = MemoryVectorRow.__table__
_state = TenantState.__table__
LOOKUP = 5_000  # entry keys one statement looks up
# The empty word, as a literal: the stamp's partial index is used only when the statement
# says `term = ''` itself.
ENTRY: ColumnClause[str] = literal_column("''")

_STAMP = select(_state.c.index_stamp).where(_state.c.tenant_id == bindparam("tenant_id"))
_ELIGIBLE_ENTRIES = select(postings.c.pk).where(
    postings.c.tenant_id == bindparam("tenant_id"),
    postings.c.term == ENTRY,
    postings.c.eligible != 0,
)
_CHANGED = select(postings.c.pk, postings.c.eligible, postings.c.stamp).where(
    postings.c.tenant_id == bindparam("tenant_id"),
    postings.c.term == ENTRY,
    postings.c.stamp > bindparam("after"),
)
_OF_KEYS = select(postings.c.pk, postings.c.eligible).where(
    postings.c.tenant_id == bindparam("tenant_id"),
    postings.c.term == ENTRY,
    postings.c.pk.in_(bindparam("keys", expanding=True)),
)
_COUNT = select(func.count()).where(
    _v.c.tenant_id == bindparam("tenant_id"),
    _v.c.model_id == bindparam("model_id"),
    _v.c.seq <= bindparam("after"),
)
_SEQS = select(_v.c.seq).where(
    _v.c.tenant_id == bindparam("tenant_id"),
    _v.c.model_id == bindparam("model_id"),
    _v.c.seq <= bindparam("after"),
)


def flags_of(conn: Connection, tenant_id: str, keys: Array) -> Array:
    """Whether each entry key's entry exists and is eligible (regardless of time)."""

    eligible: set[int] = set()
    unique = np.unique(keys).tolist()
    for start in range(0, len(unique), LOOKUP):
        part = unique[start : start + LOOKUP]
        rows = conn.execute(_OF_KEYS, {"tenant_id": tenant_id, "keys": part})
        eligible.update(int(k) for k, flag in rows if flag)
    return np.fromiter((int(k) in eligible for k in keys.tolist()), np.bool_, len(keys))


def catch_up(conn: Connection, held: HeldRows, tenant_id: str, model_id: str) -> None:
    """Brings the held rows' flags up to the caller's transaction (under `held.lock`, after
    the rows stored since were appended with their flags)."""

    params = {"tenant_id": tenant_id}
    stamp = next(iter(driver_rows(conn, _STAMP, params)), (0,))[0] or 0
    if held.keys is None or held.ok is None:
        return
    if held.stamp < 0:  # every flag read afresh
        eligible = np.fromiter(
            (r[0] for r in driver_rows(conn, _ELIGIBLE_ENTRIES, params)), np.int64
        )
        held.set_ok(np.isin(held.keys, eligible), stamp)
        return
    if stamp <= held.stamp:
        return
    held_stamp = held.stamp
    ok = held.ok.copy()
    changed = driver_rows(conn, _CHANGED, params | {"after": held.stamp})
    if changed:
        keys = np.fromiter((r[0] for r in changed), np.int64, len(changed))
        flags = np.fromiter((bool(r[1]) for r in changed), np.bool_, len(changed))
        order = np.argsort(keys)
        keys, flags = keys[order], flags[order]
        rows = np.flatnonzero(np.isin(held.keys, keys))
        ok[rows] = flags[np.searchsorted(keys, held.keys[rows])]
    held.set_ok(ok, stamp)
    # Each change of the index takes one stamp, and an entry's row keeps its last: a stamp
    # no row holds was a removal (or a change overwritten since): look for deleted vectors.
    if len({r[2] for r in changed}) < stamp - held_stamp:
        _drop_deleted(conn, held, tenant_id, model_id)


def _drop_deleted(conn: Connection, held: HeldRows, tenant_id: str, model_id: str) -> None:
    """Drops the held rows whose vectors were deleted since (a source revoked or erased)."""

    params = {"tenant_id": tenant_id, "model_id": model_id, "after": held.after}
    if held.seqs is None or conn.execute(_COUNT, params).scalar_one() >= len(held.seqs):
        return
    present = np.fromiter((r[0] for r in driver_rows(conn, _SEQS, params)), np.int64)
    held.keep(np.isin(held.seqs, present))
