"""PostgreSQL with pgvector (the `pgserver` package's server): every semantic ranker the
planner can choose there returns the brute-force ranking over the tenant's eligible entries,
the same top k in the same order: the exact statement, the coarse pass over the held
vectors' int8 codes (its candidates ranked in memory), and the HNSW index scan. A vector of
an ineligible entry never comes back, nor takes an eligible one's place."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem_kernel.config import Storage
from runtime_svc.retrieval import plan
from runtime_svc.retrieval.vectors.signatures import Signatures
from runtime_svc.retrieval.vectors.vector_search import VectorSearch
from runtime_svc.storage import migrate
from runtime_svc.storage.db import Database, open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import drop_database
from tests.retrieval.conftest import MODEL, fill, seen, vector_reference
from tests.retrieval.test_rankers import DIMENSION, WINDOW, _store_vectors, docs, queries

TENANTS = itertools.count()


@pytest.fixture(scope="module")
def pg_database(pgvector_url: str) -> Iterator[Database]:
    """A database of its own on the pgvector server, migrated (its HNSW indexes made)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    name = f"agentmem_rankers_{random.getrandbits(32):08x}"
    url = make_url(pgvector_url).set(database=name).render_as_string(hide_password=False)
    admin = create_engine(pgvector_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    db = open_database(Storage(url=url))
    migrate.upgrade(db.writer)
    yield db
    db.dispose()
    drop_database(url)


def _rankers() -> dict[str, tuple[plan.Vector, Signatures, bool]]:
    """By name: the method, what is held for it, whether the plan has an HNSW index."""
    return {
        "exact": (plan.Vector.PGVECTOR, Signatures(), False),
        "coarse-held": (plan.Vector.COARSE, Signatures(), False),
        # Nothing held (no room): the index scan, else the exact statement.
        "coarse-not-held": (plan.Vector.COARSE, Signatures(max_vectors=0), False),
        "hnsw": (plan.Vector.PGVECTOR_HNSW, Signatures(), True),
    }


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=docs, seed=st.integers(0, 2**32 - 1), queries=queries)
def test_every_postgresql_vector_ranker_is_the_brute_force_ranking_over_eligible_entries(
    pg_database, docs, seed, queries
) -> None:
    uow = UnitOfWork(pg_database, window=WINDOW)
    tenant = fill(uow, f"pgvec-{next(TENANTS)}", docs, WINDOW)
    rng = random.Random(seed)
    vectors = _store_vectors(uow, tenant, rng)
    now = int(time.time() * 1e6)
    rankers = _rankers()
    for _, limit, grouped in queries:
        query = [rng.gauss(0, 1) for _ in range(DIMENSION)]
        expected = vector_reference(tenant, vectors, query, limit, grouped)
        for name, (method, held, hnsw) in rankers.items():
            chosen = plan.VectorPlan(method, MODEL, 8 * 50, grouped=grouped, hnsw=hnsw)
            with uow.read(tenant.tenant_id) as tx:
                search = VectorSearch(tx.conn, tenant.tenant_id, WINDOW, held)
                search.prepare(chosen)
                got = seen(search.search(chosen, query, limit, now))
            if name == "coarse-held":  # read in pgvector's form, held as float32
                assert [h.vectors.dtype for h in held._held.values()] == ["float32"]
            assert [(g.source_id, g.key) for g in got] == [
                (e.source_id, e.key) for e in expected
            ], name
            for g, e in zip(got, expected, strict=True):
                assert g.score == pytest.approx(e.score, abs=1e-5), name


def test_the_planner_holds_a_large_postgresql_tenant_that_fits_and_indexes_one_that_does_not():
    """PostgreSQL: small tenants exactly; larger ones by the coarse pass while their vectors
    fit the held budget, else through the HNSW index, else exactly."""

    def method(entries: int, hnsw: bool = True) -> plan.Vector:
        return plan.vector(
            sqlite=False,
            entries=entries,
            dimension=384,
            exact_max=2_000,
            candidates=50,
            model_id=MODEL,
            min_similarity=0.1,
            grouped=True,
            hnsw=hnsw,
            held_max=250_000,
        ).method

    assert method(2_000) is plan.Vector.PGVECTOR
    assert method(100_000) is plan.Vector.COARSE
    assert method(250_001) is plan.Vector.PGVECTOR_HNSW
    assert method(250_001, hnsw=False) is plan.Vector.PGVECTOR
