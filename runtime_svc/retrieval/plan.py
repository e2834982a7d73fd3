"""How a search runs, chosen in one place: which ranker takes the lexical side's top k, and
which the semantic side's, from the tenant's size and what is held in memory.

Lexical: the postings in the index tables (`retrieval.lexical.tables`) for a tenant with fewer than
`search.held_min_entries` entries (or when nothing is held), else its postings held in memory
(`retrieval.held.held_rank`), every slot scored (dense) or, when the slots and the query's postings
are many, pruned by MaxScore. Semantic (hybrid retrieval): on SQLite a tenant with at most
`retrieval.exact_search_max` entries is ranked exactly, its vectors read and ranked in memory
while they fit `IN_MEMORY_MAX` floats, else in SQL; a larger one is narrowed to candidates
first (the coarse pass: the held vectors' int8 codes, else their signatures, eligibility
masked inside it), ranked in memory when the vectors are held, else in SQL. On PostgreSQL
pgvector ranks a tenant with at most `retrieval.exact_search_max` entries exactly; a larger
one whose vectors fit `retrieval.held_max_vectors` gets the same coarse pass over its held
vectors' int8 codes, the candidates ranked exactly in memory (when another tenant's took
their room meanwhile: as if nothing were held); one that does not fit, or with nothing
held, goes through its HNSW index (`retrieval.vectors.pg_hnsw`) when migration 0021 made one for the
model's dimension, else is ranked exactly.

The plan is said in `ExplainRetrieval`'s debug log line (`describe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

SAMPLE_MAX = 50_000  # the longest shortest word list worth pruning with
# Up to this many slots and query-word postings together, scoring every slot (one array of
# the tenant's slots, each word's list added in once) costs less than pruning, whose exact
# scores look each candidate up in every list (docs/benchmarks.md, design measurements).
# At 1M memories of everyday words (millions of postings a query) pruning is what keeps
# search within its targets.
DENSE_MAX = 1 << 18
# SQLite: a small tenant's vectors are read and ranked in memory for one search while they
# hold at most this many floats (8 MB: 5,000 vectors at 384 dimensions, 680 at 3,072);
# otherwise they are ranked in SQL, which streams them.
IN_MEMORY_MAX = 2_000_000
COARSE_FACTOR = 8  # coarse candidates per semantic candidate


class Lexical(StrEnum):
    TABLES = "postings-in-tables"
    HELD_DENSE = "postings-held-dense"
    HELD_PRUNED = "postings-held-pruned"


class Vector(StrEnum):
    IN_MEMORY = "vectors-exact-in-memory"
    IN_SQL = "vectors-exact-in-sql"
    COARSE = "vectors-coarse-signatures"
    PGVECTOR = "vectors-pgvector"
    PGVECTOR_HNSW = "vectors-pgvector-hnsw"


def lexical(entries: int, held_min_entries: int | None) -> Lexical:
    """Tables or held (`held_min_entries` None: nothing is held); `held_method` then picks
    how held postings are ranked."""
    if held_min_entries is None or entries < held_min_entries:
        return Lexical.TABLES
    return Lexical.HELD_DENSE


def held_method(slots: int, lists: Sequence[int]) -> Lexical:
    """Dense or pruned, from the tenant's slots and the lengths of the query words' lists."""
    if len(lists) < 2 or min(lists) > SAMPLE_MAX or slots + sum(lists) <= DENSE_MAX:
        return Lexical.HELD_DENSE
    return Lexical.HELD_PRUNED


@dataclass(frozen=True)
class VectorPlan:
    method: Vector
    model_id: str
    coarse: int  # candidates of the coarse pass
    min_similarity: float = -1.0  # nearer than this only
    grouped: bool = True  # each source once, by its nearest passage
    margin: float = 2.0  # within this of the best eligible hit only (2: no relative floor)
    hnsw: bool = False  # PostgreSQL: an HNSW index for the model's dimension (the fallback)


def vector(
    *,
    sqlite: bool,
    entries: int,
    dimension: int,
    exact_max: int,
    candidates: int,
    model_id: str,
    min_similarity: float,
    grouped: bool,
    hnsw: bool = False,
    held_max: int = 0,
    margin: float = 2.0,
) -> VectorPlan:
    """The semantic side's ranker for a tenant of `entries` index entries (one vector each
    once embedded; `hnsw`: PostgreSQL has an HNSW index for the model's dimension;
    `held_max`: how many vectors may be held in memory, all tenants together)."""
    if not sqlite:
        if entries <= exact_max:
            method = Vector.PGVECTOR
        elif entries <= held_max:
            method = Vector.COARSE
        else:
            method = Vector.PGVECTOR_HNSW if hnsw else Vector.PGVECTOR
    elif entries > exact_max:
        method = Vector.COARSE
    elif entries * dimension <= IN_MEMORY_MAX:
        method = Vector.IN_MEMORY
    else:
        method = Vector.IN_SQL
    coarse = candidates * COARSE_FACTOR
    return VectorPlan(method, model_id, coarse, min_similarity, grouped, margin, hnsw)


def describe(lexical_ran: str, vector_plan: VectorPlan | None) -> dict[str, str]:
    """What ran, for the debug log line (names of rankers only)."""
    out = {"lexical": lexical_ran}
    if vector_plan is not None:
        out["semantic"] = vector_plan.method.value
    return out
