"""PostgreSQL: a large tenant's vectors ranked through pgvector's HNSW index, the tenant and
eligibility filters inside the index scan.

The index (migration 0021) is one partial index per dimension over the stored `real[]` cast
to `vector(d)`, cosine distance: `ix_memory_vectors_hnsw_<d>`. The statement orders the
tenant's vectors of the model by distance to the query with the tenant check and the whole
eligibility predicate in its WHERE clause, under a LIMIT: the executor pulls vectors from the
index scan until that many have passed the filters. With pgvector 0.8 or later the scan is
iterative (`hnsw.iterative_scan = relaxed_order`): it goes on past `hnsw.ef_search` until
enough vectors pass; before 0.8 it stops at `ef_search` (raised to the LIMIT, at most 1,000).
Either way, when the scan returns fewer eligible vectors than the search needs while the
similarity floor did not stop it, the exact search runs instead (`vector_search`), so
an approximate scan never leaves fewer than k eligible results where there are k.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Float,
    Select,
    bindparam,
    cast,
    func,
    literal,
    literal_column,
    select,
    true,
)

from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.source_rows import sources

v = MemoryVectorRow.__table__
# Dimensions migration 0021 indexes (the default model's 384 and common others).
DIMENSIONS = (384, 768, 1024, 1536)
EF_SEARCH_MAX = 1000  # pgvector's bound on hnsw.ef_search
# The scan's candidate list at least (hnsw.ef_search; pgvector's default is 40). Its cost
# grows with it faster than its recall does (docs/benchmarks.md, design measurements).
EF_SEARCH_MIN = 100
SCAN_FACTOR = 2  # vectors the scan yields per result wanted (passages of one source group)


def index_name(dimension: int) -> str:
    return f"ix_memory_vectors_hnsw_{dimension}"


@dataclass(frozen=True)
class Features:
    iterative: bool  # pgvector 0.8 or later: iterative index scans
    indexed: frozenset[int]  # dimensions with an HNSW index


_features: weakref.WeakKeyDictionary[Engine, Features] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def features(conn: Connection) -> Features:
    """What the server offers (read once per engine: the index is made by migrations,
    before the runtime serves)."""
    with _lock:
        found = _features.get(conn.engine)
    if found is not None:
        return found
    version = conn.exec_driver_sql(
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
    ).scalar()
    names = set(
        conn.exec_driver_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors'"
        ).scalars()
    )
    found = Features(
        iterative=_at_least(version or "0", (0, 8)),
        indexed=frozenset(d for d in DIMENSIONS if index_name(d) in names),
    )
    with _lock:
        _features[conn.engine] = found
    return found


def _at_least(version: str, wanted: tuple[int, int]) -> bool:
    parts = []
    for p in version.split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts) >= wanted


def scan_size(limit: int) -> int:
    return min(EF_SEARCH_MAX, max(limit * SCAN_FACTOR, 40))


def configure(conn: Connection, scan: int) -> None:
    """The index scan's settings: the transaction's (SET LOCAL); on a read in autocommit
    (`storage.unit_of_work`: each statement its own transaction, so a local setting would be
    gone before the scan) the session's, which every scan sets again before it runs."""
    ef = min(EF_SEARCH_MAX, max(scan, EF_SEARCH_MIN))
    autocommit = conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
    local = "false" if autocommit else "true"
    conn.exec_driver_sql(f"SELECT set_config('hnsw.ef_search', %(n)s, {local})", {"n": str(ef)})
    if features(conn).iterative:
        conn.exec_driver_sql(f"SELECT set_config('hnsw.iterative_scan', 'relaxed_order', {local})")


@lru_cache(maxsize=16)
def statement(dimension: int, grouped: bool) -> Select[Any]:
    """The index scan's nearest `scan` eligible vectors of the tenant and model, then the
    similarity floor and the top `limit` (`vector_sql.top`); with how many the scan gave
    (`scanned`) and the distance of the farthest (`reach`)."""
    from pgvector.sqlalchemy import Vector as PgVector

    from runtime_svc.retrieval.vectors.vector_sql import near, top

    typed = PgVector(dimension)
    distance = cast(v.c.embedding, typed).op("<=>", return_type=Float)(
        bindparam("qvec", type_=typed)
    )
    scanned = (
        select(
            v.c.source_pk.label("pk"), v.c.passage, sources.c.source_id, distance.label("distance")
        )
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(
            v.c.tenant_id == bindparam("tenant_id"),
            v.c.model_id == bindparam("model_id"),
            # A literal: the planner matches it to the partial index's predicate.
            v.c.dimension == literal_column(str(int(dimension))),
            sources.c.tenant_id == bindparam("tenant_id"),
            eligibility_sql.eligible(sources.c, bindparam("now_us")),
        )
        .order_by(distance)
        .limit(bindparam("scan"))
        .cte("scanned")
        .prefix_with("MATERIALIZED")
    )
    eligible = select(scanned).where(near(scanned.c.distance)).subquery("eligible")
    hits = top(eligible, grouped).subquery("hits")
    one = select(literal(1).label("one")).subquery("one")
    return (
        select(
            select(func.count()).select_from(scanned).scalar_subquery().label("scanned"),
            select(func.max(scanned.c.distance)).scalar_subquery().label("reach"),
            hits,
        )
        .select_from(one.outerjoin(hits, true()))
        .order_by(hits.c.distance, hits.c.source_id, hits.c.passage)
    )
