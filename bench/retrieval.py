"""`make bench`: retrieval through both services on synthetic corpora, next to its floors.

Floors, measured in the same run on the same machine: a bare two-hop gRPC echo (the cost of
two gRPC hops, no work) and the naive full-text query of the backend on the same corpus
(the question's words OR-ed, ranked, LIMIT 10, no filter): SQLite FTS5 with bm25, or on
PostgreSQL a stored tsvector with a GIN index and ts_rank. The targets relative to the echo
(the everyday corpora) compare with an echo timed again just before their own calls. Also
insert throughput and LoCoMo-dev recall.

    python -m bench.retrieval             # 10k, 100k, 20k of everyday words, 20k of a few
    python -m bench.retrieval --million   # also the 1M corpora
    python -m bench.retrieval --postgres  # the same with the runtime on PostgreSQL
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from agentmem.client import connect
from agentmem.v1 import common_pb2, retrieval_pb2, review_pb2, sources_pb2, thread_mode_pb2
from bench import (
    beam,
    corpus,
    evidence,
    hybrid,
    latency_budget,
    locomo,
    pg_hybrid,
    servers,
    vector_recall,
)
from bench import passages as passage_bench
from bench.common import (
    echo_floor,
    echo_here,
    echo_here_lines,
    percentiles,
    retrieval_rpcs,
    retrieval_rpcs_interleaved,
    sqlite_copy,
    timed,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


# Corpora up to this size get their vectors from the local model (the indexer's work, done in
# bulk); larger ones random unit vectors: on 2 CPU cores the model embeds 100-250 texts/s, and
# search costs the same whatever the vectors hold. `--model-vectors-max` changes it.
MODEL_VECTORS_MAX = 10_000


def naive_floor(url: str, tmp: Path, questions: list[str]) -> dict[str, float]:
    """The backend's naive full-text query over the whole corpus (every tenant)."""
    words = [re.findall(r"\w+", q.lower()) for q in questions]
    if url.startswith("sqlite"):
        db = sqlite3.connect(tmp / "naive.db")
        db.execute("ATTACH DATABASE ? AS corpus", (url.removeprefix("sqlite:///"),))
        db.execute(
            "CREATE VIRTUAL TABLE naive USING fts5(body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        db.execute("INSERT INTO naive(rowid, body) SELECT pk, generated_form FROM corpus.sources")
        db.execute("INSERT INTO naive(naive) VALUES ('optimize')")
        db.commit()
        sql = "SELECT rowid FROM naive WHERE naive MATCH ? ORDER BY bm25(naive) LIMIT 10"
        matches = [" OR ".join(f'"{w}"' for w in ws) for ws in words]
        calls = [lambda m=m: db.execute(sql, (m,)).fetchall() for m in matches]
        try:
            return timed(calls, warmup=min(5, len(calls)))
        finally:
            db.close()
            (tmp / "naive.db").unlink()
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE naive AS SELECT pk, to_tsvector('english', generated_form) AS tsv "
            "FROM sources"
        )
        conn.exec_driver_sql("CREATE INDEX naive_tsv ON naive USING gin (tsv)")
        conn.exec_driver_sql("ANALYZE naive")
        conn.commit()
        sql = text(
            "SELECT pk FROM naive, to_tsquery('english', :q) AS q WHERE tsv @@ q "
            "ORDER BY ts_rank(tsv, q) DESC LIMIT 10"
        )
        queries = [" | ".join(ws) for ws in words]
        calls = [lambda q=q: conn.execute(sql, {"q": q}).fetchall() for q in queries]
        try:
            return timed(calls, warmup=min(5, len(calls)))
        finally:
            conn.rollback()
            conn.exec_driver_sql("DROP TABLE naive")
            conn.commit()
            engine.dispose()


@dataclass(frozen=True)
class Plan:
    name: str
    tenants: int
    per_tenant: int
    cold: list[float]
    floor_questions: int
    everyday: bool = False
    narrow: int = 0  # only so many words (low selectivity: most memories match a question)
    # Short sentences from templates (`corpus.ShortLanguage`), made cold through the API
    # (SetSourceClassification) once the services run.
    short: bool = False
    common: bool = False  # the short templates over 40 common words and 16 names
    # False: no planner statistics (as a burst of inserts leaves a database, before it is
    # analysed): `corpus.load(analysed=False)`.
    analysed: bool = True


def scenario(
    tmp: Path,
    plan: Plan,
    n_questions: int,
    postgres: bool,
    hybrid_on: bool = False,
    vectors_max: int = MODEL_VECTORS_MAX,
) -> list[dict]:
    print(
        f"-- {plan.name}: loading {plan.tenants * plan.per_tenant:,} memories "
        f"({plan.tenants} tenant{'s' if plan.tenants > 1 else ''}"
        f"{', everyday words' if plan.everyday else ''})",
        flush=True,
    )
    tenant_ids = [f"bench-{i}" for i in range(plan.tenants)]
    rows = []
    with servers.database(tmp, plan.name, postgres) as url:
        started = time.perf_counter()
        corpus.load(
            url,
            tenant_ids,
            plan.per_tenant,
            everyday=plan.everyday,
            narrow=plan.narrow,
            short=plan.short,
            common=plan.common,
            analysed=plan.analysed,
        )
        load_s = time.perf_counter() - started
        lang = corpus.language(
            99, everyday=plan.everyday, narrow=plan.narrow, short=plan.short, common=plan.common
        )
        questions = [lang.question() for _ in range(n_questions)]
        keys = [servers.key(f"tok-{t}", t, servers.ALL_SCOPES) for t in tenant_ids]
        floor = naive_floor(url, tmp, questions[: plan.floor_questions])
        # The targets relative to the echo compare with an echo measured here, just before
        # these calls (back to back, as the run's first): the machine's speed drifts over
        # the minutes a run takes (docs/benchmarks.md).
        echo_now = echo_floor(tmp) if plan.everyday or plan.short else None
        token_for = lambda i: f"tok-{tenant_ids[i % plan.tenants]}"  # noqa: E731
        with contextlib.ExitStack() as stacks:
            results: dict[float, dict] = {}
            first_search: dict[float, float] = {}
            beside: dict[float, dict] = {}  # nothing cold, measured beside each cold fraction
            if not postgres and len(plan.cold) > 1 and 0.0 in plan.cold:
                # One copy of the corpus per cold fraction, each behind its own services,
                # measured interleaved, question by question: the cold targets compare them.
                # Nothing cold is measured alone too, afterwards (its row's figures: what the
                # hybrid target compares with, measured alone as well).
                urls = {}
                for fraction in plan.cold:
                    urls[fraction] = url
                    if fraction:
                        urls[fraction] = sqlite_copy(url, tmp / f"{plan.name}-cold-{fraction}")
                        for t in tenant_ids:
                            corpus.make_cold(urls[fraction], t, fraction)
                addresses = {
                    str(f): stacks.enter_context(servers.agentmem(tmp, keys, storage_url=u))
                    for f, u in urls.items()
                }
                by_label = retrieval_rpcs_interleaved(addresses, token_for, questions)
                results = {f: by_label[str(f)] for f in plan.cold}
                results[0.0] = retrieval_rpcs(addresses["0.0"], token_for, questions)
                beside = {f: by_label["0.0"]["SearchMemories"] for f in plan.cold if f}
            else:
                address = stacks.enter_context(servers.agentmem(tmp, keys, storage_url=url))
                for fraction in plan.cold:
                    if fraction and plan.short:
                        for i in range(plan.tenants):
                            cold_through_api(address, token_for(i), fraction)
                        # The first search after those changes, before any warm-up: what a
                        # user meets right after a burst of writes.
                        first_search[fraction] = first_call(address, token_for(0), questions[0])
                    elif fraction:
                        for t in tenant_ids:
                            corpus.make_cold(url, t, fraction)
                    if echo_now is not None:  # the floor just before these calls
                        echo_now = echo_floor(tmp)
                    results[fraction] = retrieval_rpcs(address, token_for, questions)
            for fraction in plan.cold:
                result = results[fraction]
                row = {
                    "scenario": plan.name,
                    "memories": plan.tenants * plan.per_tenant,
                    "tenants": plan.tenants,
                    "everyday": plan.everyday,
                    "cold": fraction,
                    "load_s": round(load_s, 1),
                    "naive_fts_floor": floor,
                    **result,
                }
                if fraction in beside:
                    row["nothing_cold_beside"] = beside[fraction]
                if fraction in first_search:
                    row["first_search_after_changes_ms"] = first_search[fraction]
                if echo_now is not None:
                    row["echo_floor_here"] = echo_now
                rows.append(row)
                print(
                    f"   cold {fraction:>4.0%}: naive p50 {floor['p50_ms']} ms, "
                    + ", ".join(f"{k} p50 {v['p50_ms']} ms" for k, v in result.items())
                    + (
                        f" (interleaved; nothing cold beside: Search p50 "
                        f"{beside[fraction]['p50_ms']} ms)"
                        if fraction in beside
                        else ""
                    ),
                    flush=True,
                )
        if hybrid_on and not postgres and plan.name in HYBRID_SCENARIOS:
            data = Path(make_url(url).database).parent
            rows.append(
                hybrid_scenario(
                    tmp, data, plan.name, tenant_ids, keys, questions, rows[0], vectors_max
                )
            )
    return rows


def cold_through_api(address: str, token: str, fraction: float, seed: int = 11) -> int:
    """Makes about `fraction` of the tenant's memories cold with SetSourceClassification, as
    a user would; returns how many."""
    rng = random.Random(seed)
    chosen = []
    with connect(address, token) as client:
        page_token = ""
        while True:
            page = client.ListSources(
                sources_pb2.ListSourcesRequest(page_size=1000, page_token=page_token), timeout=60
            )
            chosen += [(s.source_id, s.revision) for s in page.sources if rng.random() < fraction]
            page_token = page.next_page_token
            if not page_token:
                break
        for source_id, revision in chosen:
            client.SetSourceClassification(
                sources_pb2.SetSourceClassificationRequest(
                    source_id=source_id,
                    expected_revision=revision,
                    classification=sources_pb2.CLASSIFICATION_COLD,
                ),
                timeout=30,
            )
    return len(chosen)


def first_call(address: str, token: str, question: str) -> float:
    """One Search through both services, timed (ms), on a client of its own."""
    with connect(address, token) as client:
        # The channel made first (not timed), by a call that does not search.
        client.ListSources(sources_pb2.ListSourcesRequest(page_size=1), timeout=30)
        t = time.perf_counter()
        client.SearchMemories(
            retrieval_pb2.SearchMemoriesRequest(query=question, limit=10), timeout=30
        )
        return round((time.perf_counter() - t) * 1000, 3)


HYBRID_SCENARIOS = {"10k", "100k", "1M-1000-tenants"}


def hybrid_scenario(
    tmp: Path,
    data: Path,
    name: str,
    tenant_ids: list[str],
    keys: list[dict],
    questions: list[str],
    lexical: dict,
    model_vectors_max: int,
) -> dict:
    """The same corpus and questions with hybrid retrieval on (nothing cold)."""
    db_path = data / "agentmem.db"
    url = f"sqlite:///{db_path}"
    for t in tenant_ids:
        corpus.make_cold(url, t, 0.0)
    random_vectors = lexical["memories"] > model_vectors_max
    print(
        f"   embedding {lexical['memories']:,} memories"
        + (" (random unit vectors)" if random_vectors else " with the local model"),
        flush=True,
    )
    rate = hybrid.load_vectors(db_path, random_vectors=random_vectors)
    tenants = len(tenant_ids)
    with servers.agentmem(tmp, keys, data_dir=data, extra_env=hybrid.hybrid_env()) as address:
        result = retrieval_rpcs(address, lambda i: f"tok-{tenant_ids[i % tenants]}", questions)
    print(
        "   hybrid:    " + ", ".join(f"{k} p50 {v['p50_ms']} ms" for k, v in result.items()),
        flush=True,
    )
    return {
        **{k: v for k, v in lexical.items() if k not in result},
        **result,
        "cold": 0.0,
        "retrieval": "hybrid" + (", random vectors" if random_vectors else ""),
        "embeddings_per_s": rate,
    }


OBSERVABILITY = {
    "off": {},
    "metrics": {
        "AGENTMEM_GATEWAY__METRICS_LISTEN": "127.0.0.1:0",
        "AGENTMEM_RUNTIME__METRICS_LISTEN": "127.0.0.1:0",
    },
    "tracing": {"AGENTMEM_TRACING__ENABLED": "true"},  # spans made, no exporter
}


def observability_cost(tmp: Path, n_questions: int, rounds: int = 3) -> dict[str, dict]:
    """Search p50 on the 10k corpus with metrics and tracing off, metrics on, tracing on.
    The three stacks run side by side on copies of one corpus and are called in turn, so
    they share the machine's conditions (it is shared and noisy)."""
    print("-- observability: Search with metrics / tracing off and on", flush=True)
    data = tmp / "observability"
    data.mkdir()
    corpus.load(data / "agentmem.db", ["bench-0"], 10_000)
    lang = corpus.Language(seed=7)
    questions = [lang.question() for _ in range(n_questions)]
    keys = [servers.key("tok-bench-0", "bench-0", servers.ALL_SCOPES)]
    samples: dict[str, list[float]] = {mode: [] for mode in OBSERVABILITY}
    with contextlib.ExitStack() as stack:
        clients = {}
        for mode, env in OBSERVABILITY.items():
            copy = tmp / f"observability-{mode}"
            copy.mkdir()
            shutil.copy(data / "agentmem.db", copy / "agentmem.db")
            address = stack.enter_context(servers.agentmem(tmp, keys, copy, extra_env=env))
            clients[mode] = stack.enter_context(connect(address, "tok-bench-0"))
        modes = list(OBSERVABILITY)
        for r in range(rounds + 1):  # the first round warms up
            for i, q in enumerate(questions):
                request = retrieval_pb2.SearchMemoriesRequest(query=q, limit=10)
                shift = (i + r) % len(modes)
                for mode in modes[shift:] + modes[:shift]:  # rotate who goes first
                    t = time.perf_counter()
                    clients[mode].SearchMemories(request, timeout=30)
                    if r:
                        samples[mode].append((time.perf_counter() - t) * 1000)
    out = {mode: percentiles(v) for mode, v in samples.items()}
    for mode, v in out.items():
        print(f"   {mode:>8}: p50 {v['p50_ms']} ms, p99 {v['p99_ms']} ms", flush=True)
    return out


def insert_throughput(tmp: Path, postgres: bool, n: int = 2000) -> dict[str, float]:
    keys = [servers.key("tok-ins", "ins", servers.ALL_SCOPES)]
    lang = corpus.Language(seed=5)
    texts = [lang.sentence() for _ in range(n * 2)]
    out = {}
    with (
        servers.database(tmp, "inserts", postgres) as url,
        servers.agentmem(tmp, keys, storage_url=url) as address,
        connect(address, "tok-ins") as client,
    ):

        def insert(text: str) -> None:
            client.InsertMemory(sources_pb2.InsertMemoryRequest(content=text), timeout=30)

        for in_flight, batch in ((1, texts[: n // 2]), (16, texts[n:])):
            with ThreadPoolExecutor(in_flight) as pool:
                t = time.perf_counter()
                list(pool.map(insert, batch))
                out[f"inserts_per_s_{in_flight}_in_flight"] = round(
                    len(batch) / (time.perf_counter() - t)
                )
        read = thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1")
        out["ReadThreadMemoryMode"] = timed(
            [lambda: client.ReadThreadMemoryMode(read, timeout=10)] * 2000, warmup=200
        )
    out["policies"] = policy_throughput(tmp, texts[:n], postgres)
    return out


def policy_throughput(tmp: Path, texts: list[str], postgres: bool) -> dict[str, int]:
    """Inserts/s with 16 in flight under each insert policy (one tenant each, set by an
    admin's override): permissive without a marker, require_save_intent with one, and
    review_pending without one (stored pending)."""
    cases = {
        "permissive": (common_pb2.INSERT_POLICY_PERMISSIVE, ""),
        "require_save_intent": (common_pb2.INSERT_POLICY_REQUIRE_SAVE_INTENT, "user_confirmed"),
        "review_pending": (common_pb2.INSERT_POLICY_REVIEW_PENDING, ""),
    }
    keys = [servers.key(f"tok-{name}", name, servers.ALL_SCOPES) for name in cases]
    out = {}
    with (
        servers.database(tmp, "policies", postgres) as url,
        servers.agentmem(tmp, keys, storage_url=url) as address,
    ):
        for name, (policy, intent) in cases.items():
            with connect(address, f"tok-{name}") as client:
                client.SetInsertPolicy(
                    review_pb2.SetInsertPolicyRequest(expected_revision=0, insert_policy=policy)
                )
                md = sources_pb2.InsertMetadata(save_intent=intent)

                def insert(text: str, client=client, md=md) -> None:  # type: ignore[no-untyped-def]
                    client.InsertMemory(
                        sources_pb2.InsertMemoryRequest(content=text, metadata=md), timeout=30
                    )

                with ThreadPoolExecutor(16) as pool:
                    t = time.perf_counter()
                    list(pool.map(insert, texts))
                    out[name] = round(len(texts) / (time.perf_counter() - t))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--million", action="store_true", help="add the 1M-memory corpora")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="run the runtime on PostgreSQL (AGENTMEM_BENCH_DATABASE_URL)",
    )
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--no-hybrid", action="store_true", help="lexical retrieval only")
    parser.add_argument(
        "--model-vectors-max",
        type=int,
        default=MODEL_VECTORS_MAX,
        help="larger corpora get random unit vectors instead of the model's",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated parts: 10k, 100k, 20k-everyday, 20k-low-selectivity, 20k-short, "
        "20k-common, "
        "1M-1000-tenants, 1M-one-tenant, "
        "1M-everyday, writes, locomo, observability, paraphrase, hybrid-writes, passages (or "
        "20k-everyday-passages, 100k-passages), "
        "conversation-writes, locomo-passages, evidence, beam, latency-budget, vector-recall, "
        "pg-hybrid (PostgreSQL with pgvector from pgserver: 100k vectors, 1M with --million; "
        "pg-hybrid-one-tenant or pg-hybrid-1000-tenants for one shape)",
    )
    args = parser.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    backend = "postgresql" if args.postgres else "sqlite"
    report: dict = {"machine": machine, "date": time.strftime("%Y-%m-%d"), "backend": backend}
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print("-- floors: two-hop gRPC echo", flush=True)
        report["echo_floor"] = echo_floor(tmp)
        print(f"   {report['echo_floor']}", flush=True)
        plans = [
            Plan("10k", 1, 10_000, [0.0], 200),
            Plan("100k", 1, 100_000, [0.0, 0.1, 0.5], 100),
            Plan("20k-everyday", 1, 20_000, [0.1], 200, everyday=True),
            Plan("20k-low-selectivity", 1, 20_000, [0.1], 200, everyday=True, narrow=12),
            Plan("20k-short", 1, 20_000, [0.1], 200, short=True),
            Plan("20k-common", 1, 20_000, [0.1], 200, short=True, common=True, analysed=False),
        ]
        if args.million:
            plans += [
                Plan("1M-1000-tenants", 1000, 1000, [0.1], 20),
                Plan("1M-one-tenant", 1, 1_000_000, [0.0, 0.1], 20),
                Plan("1M-everyday", 1, 1_000_000, [0.1], 20, everyday=True),
            ]
        only = {x for x in args.only.split(",") if x}
        name = ("latest" if not only else "partial") + ("-postgres" if args.postgres else "")
        RESULTS.mkdir(exist_ok=True)
        report["retrieval"] = []
        for plan in plans:
            if not only or plan.name in only:
                report["retrieval"] += scenario(
                    tmp,
                    plan,
                    args.questions,
                    args.postgres,
                    hybrid_on=not args.no_hybrid,
                    vectors_max=args.model_vectors_max,
                )
                save(report, name)  # what was measured survives a later failure
        if not only or "writes" in only:
            print("-- inserts and thread-mode reads", flush=True)
            report["writes"] = insert_throughput(tmp, args.postgres)
            save(report, name)
        chosen = [p for p in passage_bench.PLANS if p.name in only]  # one passage corpus
        if not only or "passages" in only or chosen:
            report["passages"] = passage_bench.latency(
                tmp, args.questions, args.postgres, chosen or passage_bench.PLANS
            )
            save(report, name)
        if not only or "conversation-writes" in only:
            print("-- conversation inserts through the API", flush=True)
            report["conversation_writes"] = passage_bench.insert_throughput(tmp, args.postgres)
            save(report, name)
        if "locomo-passages" in only and "locomo" not in only:
            print("-- LoCoMo-dev recall, sessions as conversations", flush=True)
            report["locomo"] = passage_bench.locomo_recall(args.postgres, not args.no_hybrid)
        if not only or "locomo" in only:
            print("-- LoCoMo-dev recall", flush=True)
            report["locomo"] = locomo.run(args.postgres)
            if not args.no_hybrid and not args.postgres:
                report["locomo"] |= hybrid.locomo_recall()
        if not only or "evidence" in only:
            report["evidence"] = evidence.run(args.postgres, not args.no_hybrid)
            save(report, name)
        if not only or "beam" in only:
            report["beam"] = beam.run(hybrid_on=not args.no_hybrid, postgres=args.postgres)
            save(report, name)
        if not args.no_hybrid and not args.postgres and (not only or "latency-budget" in only):
            report["latency_budget"] = latency_budget.run(tmp, args.questions)
            save(report, name)
        if not args.no_hybrid and (not only or "vector-recall" in only):
            report["vector_recall"] = vector_recall.run()
            save(report, name)
        pg_shapes = {x.removeprefix("pg-hybrid-") for x in only if x.startswith("pg-hybrid-")}
        if "pg-hybrid" in only or pg_shapes:  # by name only: PostgreSQL with pgvector
            report["pg_hybrid"] = pg_hybrid.run(tmp, args.million, args.questions, pg_shapes)
            save(report, name)
        if not args.no_hybrid and (not only or "paraphrase" in only):
            print("-- paraphrase set recall, lexical and hybrid", flush=True)
            report["paraphrase"] = hybrid.paraphrase_recall(tmp)
            report["model"] = hybrid.model_speed()
        if not args.no_hybrid and (not only or "hybrid-writes" in only):
            print("-- inserts with embeddings on, and a burst's embedding lag", flush=True)
            if args.postgres:  # a PostgreSQL with pgvector: the bench's own (pgserver)
                with servers.pgvector_database(tmp) as url:
                    report["hybrid_writes"] = hybrid.writes(tmp, storage_url=url)
            else:
                report["hybrid_writes"] = hybrid.writes(tmp)
        if not only or "observability" in only:
            report["observability"] = observability_cost(tmp, args.questions)
    save(report, name)
    print()
    print(table(report))


def save(report: dict, name: str) -> None:
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")


def table(report: dict) -> str:
    echo = report["echo_floor"]["p50_ms"]
    lines = [
        f"machine: {report['machine']} ({report['date']}), runtime on {report['backend']}",
        f"floor, two-hop gRPC echo: p50 {echo} ms, p99 {report['echo_floor']['p99_ms']} ms, "
        f"max {report['echo_floor'].get('max_ms', '-')} ms",
        "",
        "| corpus | cold | echo p50 (same run) | naive full-text p50 / p99 "
        "| Search p50 / p99 / max | Assemble p50 / p99 / max | Explain p50 / p99 / max |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["retrieval"]:
        cells = [
            str(echo_here(report, r)),
            f"{r['naive_fts_floor']['p50_ms']} / {r['naive_fts_floor']['p99_ms']}",
        ]
        cells += [
            f"{r[k]['p50_ms']} / {r[k]['p99_ms']} / {r[k].get('max_ms', '-')}"
            for k in ("SearchMemories", "AssemblePrompt", "ExplainRetrieval")
            if k in r
        ]
        name = r["scenario"] + (f" ({r['retrieval']})" if "retrieval" in r else "")
        lines.append(f"| {name} | {r['cold']:.0%} | " + " | ".join(cells) + " |")
    lines += echo_here_lines(report["retrieval"])
    lines += [
        f"first Search after {r['scenario']}'s classification changes (no warm-up): "
        f"{r['first_search_after_changes_ms']} ms"
        for r in report["retrieval"]
        if "first_search_after_changes_ms" in r
    ]
    w = report.get("writes")
    if w:
        lines += [
            "",
            f"inserts: {w['inserts_per_s_1_in_flight']}/s with 1 in flight, "
            f"{w['inserts_per_s_16_in_flight']}/s with 16 in flight; "
            f"ReadThreadMemoryMode p50 {w['ReadThreadMemoryMode']['p50_ms']} ms, "
            f"p99 {w['ReadThreadMemoryMode']['p99_ms']} ms",
            "inserts/s by insert policy (16 in flight): "
            + ", ".join(f"{k} {v}" for k, v in w["policies"].items()),
        ]
    lines += passage_bench.table_lines(report)
    for name, r in report.get("locomo", {}).items():
        lines.append(f"LoCoMo-dev {name}: recall@5 {r['recall@5']}, recall@10 {r['recall@10']}")
    obs = report.get("observability")
    if obs:
        lines.append(
            "Search p50 / p99 on 10k, by observability: "
            + ", ".join(f"{m} {v['p50_ms']} / {v['p99_ms']}" for m, v in obs.items())
        )
    for name, r in report.get("paraphrase", {}).items():
        lines.append(
            f"paraphrase set, {name}: recall@1 {r['recall@1']}, recall@5 {r['recall@5']} "
            f"({r['pairs']} pairs among {r['distractors']} distractors)"
        )
    if "model" in report:
        m = report["model"]
        lines.append(
            f"local model: {m['embeddings_per_s']} embeddings/s in batches of 64, "
            f"a query's embedding p50 {m['query_embedding_p50_ms']} ms"
        )
    hw = report.get("hybrid_writes")
    if hw:
        lines.append(
            f"embeddings on: {hw['inserts_per_s_16_in_flight']} inserts/s with 16 in flight; "
            f"a burst of {hw['burst']:,} ({hw['burst_inserts_per_s']}/s acknowledged) fully "
            f"embedded {hw['burst_embedding_lag_s']} s after its last acknowledgement "
            f"({hw['burst_embedded_per_s']}/s end to end)"
        )
    lines += evidence.table_lines(report)
    lines += beam.table_lines(report)
    lines += latency_budget.table_lines(report)
    lines += ["", "targets:", *targets(report)]
    return "\n".join(lines)


def targets(report: dict) -> list[str]:
    echo = report["echo_floor"]["p50_ms"]
    by = {
        (r["scenario"], r["cold"]): r
        for r in report["retrieval"]
        if r.get("retrieval", "lexical") == "lexical"
    }
    out = []

    def check(label: str, value: float, limit: float, unit: str = "ms") -> None:
        out.append(
            f"  {'ok  ' if value <= limit else 'MISS'} {label}: {value:.3f} {unit} "
            f"(limit {limit:.3f} {unit})"
        )

    base = by.get(("100k", 0.0))
    if base:
        check(
            "100k one tenant: Search p50 <= echo + naive p50",
            base["SearchMemories"]["p50_ms"],
            echo + base["naive_fts_floor"]["p50_ms"],
        )
        for cold in (0.1, 0.5):
            r = by[("100k", cold)]
            # Against nothing cold measured beside it, where it was (interleaved).
            nothing_cold = r.get("nothing_cold_beside", base["SearchMemories"])
            check(
                f"100k, {cold:.0%} cold: Search p50 <= 1.10 x nothing cold",
                r["SearchMemories"]["p50_ms"],
                1.10 * nothing_cold["p50_ms"],
            )
    if ("20k-everyday", 0.1) in by:
        r = by[("20k-everyday", 0.1)]
        here = echo_here(report, r)
        check("20k everyday words: Search p50 <= 3 x echo", r["SearchMemories"]["p50_ms"], 3 * here)
        check("20k everyday words: Search p99 <= 6 x echo", r["SearchMemories"]["p99_ms"], 6 * here)
    if ("20k-low-selectivity", 0.1) in by:
        r = by[("20k-low-selectivity", 0.1)]
        here, search = echo_here(report, r), r["SearchMemories"]
        if report.get("backend") != "postgresql":
            check("20k low selectivity: Search p50 <= 3 x echo", search["p50_ms"], 3 * here)
            check("20k low selectivity: Search p99 <= 10 x echo", search["p99_ms"], 10 * here)
    if ("20k-short", 0.1) in by:
        r = by[("20k-short", 0.1)]
        here, search = echo_here(report, r), r["SearchMemories"]
        if report.get("backend") == "postgresql":
            check("20k short sentences: Search p50 <= 5 x echo", search["p50_ms"], 5 * here)
        else:
            check("20k short sentences: Search p50 <= 3 x echo", search["p50_ms"], 3 * here)
            check("20k short sentences: Search p99 <= 10 x echo", search["p99_ms"], 10 * here)
    if ("20k-common", 0.1) in by:
        r = by[("20k-common", 0.1)]
        here, search = echo_here(report, r), r["SearchMemories"]
        if report.get("backend") == "postgresql":
            check("20k common words: Search p50 <= 5 x echo", search["p50_ms"], 5 * here)
            check("20k common words: Search p99 <= 15 x echo", search["p99_ms"], 15 * here)
        else:
            check("20k common words: Search p50 <= 3 x echo", search["p50_ms"], 3 * here)
            check("20k common words: Search p99 <= 10 x echo", search["p99_ms"], 10 * here)
    if ("1M-1000-tenants", 0.1) in by:
        r = by[("1M-1000-tenants", 0.1)]
        p50 = 15 if report.get("backend") == "postgresql" else 10
        check(f"1M over 1,000 tenants: Search p50 <= {p50} ms", r["SearchMemories"]["p50_ms"], p50)
        check("1M over 1,000 tenants: Search p99 <= 50 ms", r["SearchMemories"]["p99_ms"], 50)
    if report.get("backend") == "postgresql" and base:
        check("100k one tenant: Search p50 <= 20 ms", base["SearchMemories"]["p50_ms"], 20)
    if ("1M-one-tenant", 0.0) in by:
        r = by[("1M-one-tenant", 0.0)]
        check(
            "1M one tenant: Search p50 <= naive p50 / 20",
            r["SearchMemories"]["p50_ms"],
            r["naive_fts_floor"]["p50_ms"] / 20,
        )
    if ("1M-everyday", 0.1) in by:
        r = by[("1M-everyday", 0.1)]
        check(
            "1M everyday words, one tenant: Search p50 <= 15 ms", r["SearchMemories"]["p50_ms"], 15
        )
        check(
            "1M everyday words, one tenant: Search p99 <= 50 ms", r["SearchMemories"]["p99_ms"], 50
        )
    w = report.get("writes")
    if w:
        base_rate = w["policies"]["permissive"]
        for name, rate in w["policies"].items():
            ok = "ok  " if rate >= 0.8 * base_rate else "MISS"
            out.append(
                f"  {ok} inserts under {name} within 20% of permissive: {rate}/s "
                f"(permissive {base_rate}/s)"
            )
        out.append(
            f"  {'ok  ' if w['inserts_per_s_16_in_flight'] >= 500 else 'MISS'} inserts with 16 "
            f"in flight >= 500/s: {w['inserts_per_s_16_in_flight']}/s"
        )
    obs = report.get("observability")
    if obs:
        off = obs["off"]["p50_ms"]
        check("metrics on: Search p50 <= 1.05 x off", obs["metrics"]["p50_ms"], 1.05 * off)
        check(
            "tracing on, no exporter: Search p50 <= 1.10 x off",
            obs["tracing"]["p50_ms"],
            1.10 * off,
        )
    if "agentmem, dated turns" in report.get("locomo", {}):
        recall = report["locomo"]["agentmem, dated turns"]["recall@5"]
        ok = "ok  " if recall >= 0.507 else "MISS"
        out.append(f"  {ok} LoCoMo-dev recall@5 >= 0.507 (dated turns): {recall}")
    hybrid_targets(report, check, out)
    passage_bench.targets(report, check, out)
    evidence.targets(report, out)
    beam.targets(report, out)
    latency_budget.targets(report, out)
    vector_recall.targets(report, out)
    pg_hybrid.targets(report, out)
    return out


def hybrid_targets(report: dict, check: Callable[..., None], out: list[str]) -> None:
    def at_least(label: str, value: float, floor: float) -> None:
        out.append(f"  {'ok  ' if value >= floor else 'MISS'} {label}: {value} (floor {floor})")

    hybrid_rows = {
        r["scenario"]: r for r in report["retrieval"] if r.get("retrieval", "").startswith("hybrid")
    }
    # Hybrid Search against lexical at 100k: `bench.latency_budget` (the query's embedding +
    # lexical Search p50 + 3 ms, measured side by side in one run).
    if "1M-1000-tenants" in hybrid_rows:
        r = hybrid_rows["1M-1000-tenants"]
        check(
            "1M over 1,000 tenants: hybrid Search p50 <= 15 ms", r["SearchMemories"]["p50_ms"], 15
        )
        check(
            "1M over 1,000 tenants: hybrid Search p99 <= 60 ms", r["SearchMemories"]["p99_ms"], 60
        )
    para = report.get("paraphrase", {}).get("hybrid, held-back set")
    if para:
        at_least("paraphrase recall@5 (held-back set, hybrid)", para["recall@5"], 0.90)
    loco = report.get("locomo", {})
    if "hybrid" in loco:
        at_least("LoCoMo-dev recall@5 (hybrid)", loco["hybrid"]["recall@5"], 0.51)
        at_least(
            "LoCoMo-dev recall@5: hybrid not below lexical",
            loco["hybrid"]["recall@5"],
            loco["agentmem"]["recall@5"],
        )
    hw = report.get("hybrid_writes")
    if hw:
        at_least(
            "inserts with embeddings on, 16 in flight (/s)", hw["inserts_per_s_16_in_flight"], 500
        )
        at_least(
            "embedding backlog drained, a burst end to end (/s)", hw["burst_embedded_per_s"], 200
        )


if __name__ == "__main__":
    main()
