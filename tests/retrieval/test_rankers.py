"""Every ranker returns the brute-force ranking over the tenant's eligible entries: the same
top k, in the same order, with the same scores (lexical: to the last bit), whatever the
tenant holds that is not eligible. Lexical: postings in the tables (read whole, and read a
few at a time so the deepening rounds run), held in memory with every slot scored, and held
pruned by MaxScore. Semantic: vectors exact in memory, exact in SQL, and the coarse pass
(candidates covering the tenant) with its vectors held and ranked in SQL."""

from __future__ import annotations

import itertools
import random
import time
from contextlib import ExitStack

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime_svc.domain.passages import Window
from runtime_svc.domain.query import Query
from runtime_svc.retrieval import plan
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.retrieval.lexical import tables
from runtime_svc.retrieval.lexical.lexical_search import LexicalSearch
from runtime_svc.retrieval.vectors.signatures import Signatures
from runtime_svc.retrieval.vectors.vector_search import VectorSearch
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.retrieval.conftest import (
    MODEL,
    Doc,
    fill,
    reference,
    seen,
    store_vectors,
    vector_reference,
)

WORDS = ["guitar", "garden", "coffee", "river", "piano", "winter", "bread", "lamp", "yoga"]
TENANTS = itertools.count()
WINDOW = Window()
DIMENSION = 8

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(tuple)
docs = st.lists(
    st.builds(
        Doc,
        words=words,
        messages=st.one_of(st.just(()), st.lists(words, min_size=2, max_size=4).map(tuple)),
        eligible=st.booleans(),
    ),
    min_size=1,
    max_size=30,
)
queries = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.sampled_from([1, 3, 5, 50]),
        st.booleans(),
    ),
    min_size=1,
    max_size=4,
)
LEXICAL = ["tables", "tables-shallow", "held-dense", "held-pruned"]


def _lexical(conn, tenant_id: str, name: str, stack: ExitStack) -> LexicalSearch:  # type: ignore[no-untyped-def]
    mp = stack.enter_context(pytest.MonkeyPatch.context())
    if name == "tables-shallow":  # a few postings a read: the deepening rounds run
        mp.setattr(tables, "FIRST_DEPTH", 2)
        mp.setattr(tables, "GROWTH", 2)
    if name == "held-pruned":
        mp.setattr(plan, "DENSE_MAX", 0)
    mirrors = Mirrors(0, 10**7) if name.startswith("held") else None
    return LexicalSearch(conn, tenant_id, window=WINDOW, mirrors=mirrors)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=docs, queries=queries)
def test_every_lexical_ranker_is_the_brute_force_ranking_over_eligible_entries(
    database, docs, queries
) -> None:
    uow = UnitOfWork(database, window=WINDOW)
    tenant = fill(uow, f"lex-{next(TENANTS)}", docs, WINDOW)
    now = int(time.time() * 1e6)
    for query, limit, grouped in queries:
        asked = Query.of(" ".join(query))
        expected = reference(tenant, asked.terms, limit, grouped)
        for name in LEXICAL:
            with ExitStack() as stack, uow.read(tenant.tenant_id) as tx:
                ranker = _lexical(tx.conn, tenant.tenant_id, name, stack)
                got = ranker.rank(asked, limit, now, grouped=grouped)
            assert seen(got.hits) == expected, (name, query, limit, grouped)
            assert got.certificate.exact


def _store_vectors(uow: UnitOfWork, tenant, rng: random.Random) -> dict[int, list[float]]:  # type: ignore[no-untyped-def]
    vectors = {
        key: [rng.gauss(0, 1) for _ in range(DIMENSION)]
        for keyed in tenant.entries.values()
        for key in keyed
    }
    store_vectors(uow, tenant, vectors)
    return vectors


VECTOR = {
    "in-memory": (plan.Vector.IN_MEMORY, None),
    "in-sql": (plan.Vector.IN_SQL, None),
    "coarse-held": (plan.Vector.COARSE, Signatures()),
    "coarse-sql": (plan.Vector.COARSE, Signatures(max_vectors=0)),
}


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=docs, seed=st.integers(0, 2**32 - 1), queries=queries)
def test_every_vector_ranker_is_the_brute_force_ranking_over_eligible_entries(
    database, docs, seed, queries
) -> None:
    uow = UnitOfWork(database, window=WINDOW)
    tenant = fill(uow, f"vec-{next(TENANTS)}", docs, WINDOW)
    rng = random.Random(seed)
    vectors = _store_vectors(uow, tenant, rng)
    now = int(time.time() * 1e6)
    for _, limit, grouped in queries:
        query = [rng.gauss(0, 1) for _ in range(DIMENSION)]
        expected = vector_reference(tenant, vectors, query, limit, grouped)
        for name, (method, held) in VECTOR.items():
            chosen = plan.VectorPlan(method, MODEL, coarse=8 * 50, grouped=grouped)
            with uow.read(tenant.tenant_id) as tx:
                search = VectorSearch(tx.conn, tenant.tenant_id, WINDOW, held or Signatures())
                search.prepare(chosen)
                got = seen(search.search(chosen, query, limit, now))
            assert [(g.source_id, g.key) for g in got] == [
                (e.source_id, e.key) for e in expected
            ], name
            for g, e in zip(got, expected, strict=True):
                assert g.score == pytest.approx(e.score, abs=1e-5), name
