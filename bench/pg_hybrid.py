"""`make bench BENCH_ARGS="--only pg-hybrid"`: hybrid retrieval on PostgreSQL with pgvector
(the `pgserver` package's server), through both services next to the two-hop echo floor.

Two shapes of `size` vectors (100k by default, 1M with `--million`): one tenant holding them
all (ranked through the HNSW index of migration 0021) and 1,000 tenants of `size / 1000`
each (each small enough to be ranked exactly). Memories are the bench's synthetic corpus,
their vectors random unit vectors (384 dimensions, bulk-copied; the index built after the
copy, its build time reported). Reported per shape: hybrid and lexical Search p50 / p99 /
max (the lexical runtime on the same database), the query's embedding inside hybrid, and
the recall@10 of the index scan against the exact ranking (the runtime's own statements,
in process, 100 queries).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import corpus, hybrid, servers
from bench.common import echo_floor, percentiles

DIMENSION = 384
TENANTS_MANY = 1000
HELD_DEFAULT = 250_000  # retrieval.held_max_vectors' default


def _server(tmp: Path) -> Any:
    import pgserver
    from pgserver._commands import pg_ctl

    base = Path(tempfile.mkdtemp(prefix="agentmem-bench-pg-", dir=tmp))
    base.chmod(0o755)
    server = pgserver.get_server(str(base / "data"), cleanup_mode="delete")
    # What docs/postgresql.md asks of a server: the index and the vectors in shared buffers
    # (pgserver's default is 128 MB).
    server.psql("ALTER SYSTEM SET shared_buffers = '1GB'")
    pg_ctl(["-w", "stop"], pgdata=server.pgdata, user=server.system_user)
    server.ensure_postgres_running()
    return server


def _database(server: Any, name: str) -> str:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    url = make_url(server.get_uri()).set(drivername="postgresql+psycopg")
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def load_vectors(url: str, seed: int = 3, index: bool = True) -> dict[str, Any]:
    """Random unit vectors for every memory, copied in bulk with the HNSW index dropped,
    then the index built (its seconds returned; with `index` off it is not: neither shape's
    plan uses it when the vectors fit the held budget, and building it over 1M vectors
    takes longer than the rest of the run)."""
    import psycopg
    from sqlalchemy.engine import make_url

    from runtime_svc.retrieval.vectors.pg_hnsw import index_name

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    rng = np.random.default_rng(seed)
    name = index_name(DIMENSION)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {name}")
        rows = conn.execute(
            "SELECT pk, tenant_id, source_id, revision FROM sources ORDER BY pk"
        ).fetchall()
        started = time.perf_counter()
        with conn.cursor().copy(
            "COPY memory_vectors (source_pk, passage, model_id, tenant_id, source_id, "
            "source_revision, dimension, embedding, signature, created_at_us) FROM STDIN"
        ) as copy:
            for start in range(0, len(rows), 10_000):
                chunk = rows[start : start + 10_000]
                raw = rng.standard_normal((len(chunk), DIMENSION)).astype(np.float32)
                unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
                bits = np.packbits(unit > 0, axis=1)
                for (pk, tenant, source_id, revision), v, b in zip(chunk, unit, bits, strict=True):
                    embedding = "{" + ",".join(f"{x:.7g}" for x in v.tolist()) + "}"
                    copy.write_row(
                        (
                            pk,
                            0,
                            hybrid.MODEL_ID,
                            tenant,
                            source_id,
                            revision,
                            DIMENSION,
                            embedding,
                            b.tobytes(),
                            1,
                        )
                    )
        copied = time.perf_counter() - started
        conn.execute("SET maintenance_work_mem = '1GB'")
        started = time.perf_counter()
        if index:
            conn.execute(
                f"CREATE INDEX {name} ON memory_vectors USING hnsw "
                f"((embedding::vector({DIMENSION})) vector_cosine_ops) "
                f"WHERE dimension = {DIMENSION}"
            )
        built = time.perf_counter() - started if index else None
        conn.execute("ANALYZE")
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        return {
            "vectors": len(rows),
            "copy_s": round(copied, 1),
            "index_build_s": None if built is None else round(built, 1),
            "pgvector": str(version.fetchone()[0]),  # type: ignore[index]
        }


def recall(
    url: str,
    tenant: str,
    queries: np.ndarray,
    k: int = 10,
    limit: int = 50,
    held_max: int | None = None,
) -> dict[str, Any]:
    """Recall@k of the semantic side's ranker as the planner chooses it (with the default
    settings) against the runtime's exact statement (in process), each asked for the
    semantic side's `limit` candidates (`retrieval.candidates`), as a search asks; with the
    ranker's name and its p50 ms in process (the held vectors read before)."""
    from agentmem_kernel.config import Storage
    from agentmem_kernel.config_sections import Retrieval
    from runtime_svc.domain.passages import Window
    from runtime_svc.retrieval import plan
    from runtime_svc.retrieval.lexical import statistics
    from runtime_svc.retrieval.plan import Vector, VectorPlan
    from runtime_svc.retrieval.vectors import pg_hnsw
    from runtime_svc.retrieval.vectors.signatures import Signatures
    from runtime_svc.retrieval.vectors.vector_search import VectorSearch
    from runtime_svc.storage.db import open_database

    db = open_database(Storage(url=url))
    settings = Retrieval() if held_max is None else Retrieval(held_max_vectors=held_max)
    held = Signatures(max_vectors=settings.held_max_vectors)
    found, took = [], []
    with db.reader.connect() as conn:
        chosen = plan.vector(
            sqlite=False,
            entries=statistics.entry_count(conn, tenant),
            dimension=DIMENSION,
            exact_max=settings.exact_search_max,
            candidates=limit,
            model_id=hybrid.MODEL_ID,
            min_similarity=-1.0,
            grouped=True,
            hnsw=DIMENSION in pg_hnsw.features(conn).indexed,
            held_max=settings.held_max_vectors,
        )
        conn.rollback()
        exact = VectorPlan(Vector.PGVECTOR, hybrid.MODEL_ID, 0)
        for q in queries:
            with conn.begin():
                search = VectorSearch(conn, tenant, Window(), held)
                started = time.perf_counter()
                search.prepare(chosen)
                got = {h.source_id for h in search.search(chosen, q.tolist(), limit, 1)[:k]}
                took.append((time.perf_counter() - started) * 1000)
                want = {h.source_id for h in search.search(exact, q.tolist(), limit, 1)[:k]}
            found.append(len(got & want) / max(len(want), 1))
    db.dispose()
    return {
        "semantic": chosen.method.value,
        "recall_at_10": round(float(np.mean(found)), 3),
        "semantic_p50_ms": round(float(np.median(took[1:] or took)), 2),
    }


def _searches(address: str, token: str, questions: list[str]) -> dict[str, float]:

    samples = []
    with connect(address, token) as client:
        for q in questions[:10]:
            client.SearchMemories(retrieval_pb2.SearchMemoriesRequest(query=q, limit=10))
        for q in questions:
            t = time.perf_counter()
            client.SearchMemories(
                retrieval_pb2.SearchMemoriesRequest(query=q, limit=10), timeout=60
            )
            samples.append((time.perf_counter() - t) * 1000)
    return percentiles(samples)


def shape(
    tmp: Path,
    server: Any,
    name: str,
    tenants: list[str],
    per: int,
    n_q: int,
    index: bool = True,
    held_max: int | None = None,
) -> dict:
    """One shape; `held_max`: the runtime's `retrieval.held_max_vectors` when the default
    (250,000) would not hold the tenant."""
    print(f"-- pg-hybrid {name}: {len(tenants)} tenant(s) x {per:,}", flush=True)
    url = _database(server, name.replace("-", "_"))
    started = time.perf_counter()
    corpus.load(url, tenants, per)
    out: dict[str, Any] = {"shape": name, "load_s": round(time.perf_counter() - started, 1)}
    out |= load_vectors(url, index=index)
    out["held_max_vectors"] = held_max
    lang = corpus.Language(seed=99)
    questions = [lang.question() for _ in range(n_q)]
    rng = np.random.default_rng(5)
    queries = rng.standard_normal((100, DIMENSION)).astype(np.float32)
    out |= recall(url, tenants[0], queries, held_max=held_max)
    keys = [servers.key(f"tok-{t}", t, servers.ALL_SCOPES) for t in tenants[:1]]
    token = f"tok-{tenants[0]}"
    env = hybrid.hybrid_env()
    if held_max is not None:
        env["AGENTMEM_RETRIEVAL__HELD_MAX_VECTORS"] = str(held_max)
    with servers.agentmem(tmp, keys, storage_url=url, extra_env=env) as address:
        out["hybrid"] = _searches(address, token, questions)
    with servers.agentmem(tmp, keys, storage_url=url) as address:
        out["lexical"] = _searches(address, token, questions)
    out["echo"] = echo_floor(tmp)
    print("   " + line(out), flush=True)
    return out


def run(
    tmp: Path, million: bool = False, n_questions: int = 200, shapes: set[str] | None = None
) -> list[dict]:
    """Both shapes, or those named in `shapes` ("one-tenant", "1000-tenants")."""
    size = 1_000_000 if million else 100_000
    # At 1M the HNSW index is not built (neither shape's plan uses it: the one tenant's
    # vectors are held, each of the 1,000 is ranked exactly), and the one tenant needs a
    # held budget of its size.
    index = not million
    held_max = size if size > HELD_DEFAULT else None
    server = _server(tmp)
    out = []
    try:
        if not shapes or "one-tenant" in shapes:
            one = ["bench-pg-one"]
            out.append(shape(tmp, server, "one-tenant", one, size, n_questions, index, held_max))
        if not shapes or "1000-tenants" in shapes:
            tenants = [f"bench-pg-{i:04d}" for i in range(TENANTS_MANY)]
            per = size // TENANTS_MANY
            out.append(shape(tmp, server, "1000-tenants", tenants, per, n_questions, index))
        return out
    finally:
        server.cleanup()


def line(r: dict) -> str:
    h, lx, e = r["hybrid"], r["lexical"], r["echo"]
    return (
        f"{r['shape']} ({r['vectors']:,} vectors, pgvector {r['pgvector']}, index built in "
        f"{r['index_build_s']} s, held_max_vectors {r.get('held_max_vectors')}): hybrid Search "
        f"{h['p50_ms']} / {h['p99_ms']} / {h['max_ms']} ms, "
        f"lexical {lx['p50_ms']} / {lx['p99_ms']} / {lx['max_ms']} ms, "
        f"echo p50 {e['p50_ms']} ms; {r['semantic']} recall@10 vs exact {r['recall_at_10']} "
        f"({r['semantic_p50_ms']} ms in process)"
    )


def targets(report: dict, out: list[str]) -> None:
    for r in report.get("pg_hybrid") or []:
        h = r["hybrid"]
        ok = h["p50_ms"] <= 25 and h["p99_ms"] <= 60
        out.append(
            f"  {'ok  ' if ok else 'MISS'} PostgreSQL hybrid Search, {r['shape']} at "
            f"{r['vectors']:,} vectors: p50 {h['p50_ms']} ms (limit 25), p99 {h['p99_ms']} ms "
            "(limit 60)"
        )
