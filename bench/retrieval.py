"""`make bench`: retrieval through both services on synthetic corpora, next to its floors.

Floors, measured in the same run on the same machine: a bare two-hop gRPC echo (the cost of
two gRPC hops, no work) and the naive FTS5 query on the same corpus (the question's words
OR-ed, bm25, LIMIT 10, no filter). Also insert throughput and LoCoMo-dev recall.

    python -m bench.retrieval            # 10k and 100k memories
    python -m bench.retrieval --million  # also 1M in one tenant and 1M over 1,000 tenants
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from agentmem.client import connect
from agentmem.v1 import common_pb2, retrieval_pb2, review_pb2, sources_pb2, thread_mode_pb2
from bench import corpus, hybrid, locomo, servers
from runtime_svc.storage.search_index import SHARDS, shard_name

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# Corpora up to this size get their vectors from the local model (the indexer's work, done in
# bulk); larger ones random unit vectors: on 2 CPU cores the model embeds 100-250 texts/s, and
# search costs the same whatever the vectors hold. `--model-vectors-max` changes it.
MODEL_VECTORS_MAX = 10_000


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    s = sorted(samples_ms)
    return {
        "p50_ms": round(statistics.median(s), 3),
        "p99_ms": round(s[max(int(len(s) * 0.99) - 1, 0)], 3),
        "n": len(s),
    }


def timed(calls: list[Callable[[], object]], warmup: int) -> dict[str, float]:
    for call in calls[:warmup]:
        call()
    samples = []
    for call in calls:
        t = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t) * 1000)
    return percentiles(samples)


def naive_floor(db_path: Path, questions: list[str]) -> dict[str, float]:
    """Over the whole corpus: every shard that holds part of it, one after the other."""
    db = sqlite3.connect(db_path)
    shards = [
        shard_name(i)
        for i in range(SHARDS)
        if db.execute(f"SELECT 1 FROM {shard_name(i)} LIMIT 1").fetchone()
    ]

    def query(match: str) -> None:
        for name in shards:
            db.execute(
                f"SELECT rowid FROM {name} WHERE {name} MATCH ? ORDER BY bm25({name}) LIMIT 10",
                (match,),
            ).fetchall()

    calls = []
    for q in questions:
        match = "body : (" + " OR ".join(f'"{w}"' for w in re.findall(r"\w+", q.lower())) + ")"
        calls.append(lambda m=match: query(m))
    result = timed(calls, warmup=min(5, len(calls)))
    db.close()
    return result


def echo_floor(tmp: Path, n: int = 2000) -> dict[str, float]:
    with servers.echo_floor(tmp) as address, grpc.insecure_channel(address) as ch:
        echo = ch.unary_unary("/bench.Echo/Echo", lambda b: b, lambda b: b)
        return timed([lambda: echo(b"x" * 64, timeout=10)] * n, warmup=200)


def retrieval_rpcs(
    address: str,
    token_for: Callable[[int], str],
    questions: list[str],
) -> dict[str, dict]:
    clients: dict[str, object] = {}

    def client(i: int):  # type: ignore[no-untyped-def]
        token = token_for(i)
        if token not in clients:
            clients[token] = connect(address, token)
        return clients[token]

    out = {}
    for name, make in (
        (
            "SearchMemories",
            lambda c, q: c.SearchMemories(
                retrieval_pb2.SearchMemoriesRequest(query=q, limit=10), timeout=30
            ),
        ),
        (
            "AssemblePrompt",
            lambda c, q: c.AssemblePrompt(
                retrieval_pb2.AssemblePromptRequest(query=q, thread_id="bench", token_budget=400),
                timeout=30,
            ),
        ),
        (
            "ExplainRetrieval",
            lambda c, q: c.ExplainRetrieval(
                retrieval_pb2.ExplainRetrievalRequest(query=q, limit=10), timeout=30
            ),
        ),
    ):
        calls = [lambda i=i, q=q, make=make: make(client(i), q) for i, q in enumerate(questions)]
        out[name] = timed(calls, warmup=min(20, len(calls)))
    for c in clients.values():
        c.close()  # type: ignore[attr-defined]
    return out


def scenario(
    tmp: Path,
    name: str,
    tenants: int,
    per_tenant: int,
    cold: list[float],
    n_questions: int,
    floor_questions: int,
    hybrid: bool = True,
    model_vectors_max: int = MODEL_VECTORS_MAX,
) -> list[dict]:
    print(
        f"-- {name}: loading {tenants * per_tenant:,} memories "
        f"({tenants} tenant{'s' if tenants > 1 else ''})",
        flush=True,
    )
    data = tmp / name
    data.mkdir()
    db_path = data / "agentmem.db"
    tenant_ids = [f"bench-{i}" for i in range(tenants)]
    started = time.perf_counter()
    corpus.load(db_path, tenant_ids, per_tenant)
    load_s = time.perf_counter() - started
    lang = corpus.Language(seed=99)
    questions = [lang.question() for _ in range(n_questions)]
    keys = [servers.key(f"tok-{t}", t, servers.ALL_SCOPES) for t in tenant_ids]
    rows = []
    floor = naive_floor(db_path, questions[:floor_questions])
    with servers.agentmem(tmp, keys, data_dir=data) as address:
        for fraction in cold:
            if fraction:
                for t in tenant_ids:
                    corpus.make_cold(db_path, t, fraction)
            result = retrieval_rpcs(address, lambda i: f"tok-{tenant_ids[i % tenants]}", questions)
            row = {
                "scenario": name,
                "memories": tenants * per_tenant,
                "tenants": tenants,
                "cold": fraction,
                "load_s": round(load_s, 1),
                "naive_fts_floor": floor,
                **result,
            }
            rows.append(row)
            print(
                f"   cold {fraction:>4.0%}: "
                + ", ".join(f"{k} p50 {v['p50_ms']} ms" for k, v in result.items()),
                flush=True,
            )
    if hybrid:
        rows.append(
            hybrid_scenario(
                tmp, data, name, tenant_ids, keys, questions, rows[0], model_vectors_max
            )
        )
    return rows


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
    for t in tenant_ids:
        corpus.make_cold(db_path, t, 0.0)
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


def insert_throughput(tmp: Path, n: int = 2000) -> dict[str, float]:
    keys = [servers.key("tok-ins", "ins", servers.ALL_SCOPES)]
    lang = corpus.Language(seed=5)
    texts = [lang.sentence() for _ in range(n * 2)]
    out = {}
    with (
        servers.agentmem(tmp, keys, data_dir=tmp / "inserts") as address,
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
    out["policies"] = policy_throughput(tmp, texts[:n])
    return out


def policy_throughput(tmp: Path, texts: list[str]) -> dict[str, int]:
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
    with servers.agentmem(tmp, keys, data_dir=tmp / "policies") as address:
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
        help="comma-separated parts: 10k, 100k, 1M-1000-tenants, 1M-one-tenant, writes, locomo, "
        "paraphrase, hybrid-writes",
    )
    args = parser.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    report: dict = {"machine": machine, "date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print("-- floors: two-hop gRPC echo", flush=True)
        report["echo_floor"] = echo_floor(tmp)
        print(f"   {report['echo_floor']}", flush=True)
        plans = [("10k", 1, 10_000, [0.0], 200), ("100k", 1, 100_000, [0.0, 0.1, 0.5], 100)]
        if args.million:
            plans += [
                ("1M-1000-tenants", 1000, 1000, [0.1], 20),
                ("1M-one-tenant", 1, 1_000_000, [0.0, 0.1], 20),
            ]
        only = {x for x in args.only.split(",") if x}
        rows = []
        for name, tenants, per_tenant, cold, floor_n in plans:
            if not only or name in only:
                rows += scenario(
                    tmp,
                    name,
                    tenants,
                    per_tenant,
                    cold,
                    args.questions,
                    floor_n,
                    hybrid=not args.no_hybrid and name != "1M-one-tenant",
                    model_vectors_max=args.model_vectors_max,
                )
        report["retrieval"] = rows
        if not args.no_hybrid and (not only or "paraphrase" in only):
            print("-- paraphrase set recall, lexical and hybrid", flush=True)
            report["paraphrase"] = hybrid.paraphrase_recall(tmp)
            report["model"] = hybrid.model_speed()
        if not args.no_hybrid and (not only or "hybrid-writes" in only):
            print("-- inserts with embeddings on, and a burst's embedding lag", flush=True)
            report["hybrid_writes"] = hybrid.writes(tmp)
        if not only or "writes" in only:
            print("-- inserts and thread-mode reads", flush=True)
            report["writes"] = insert_throughput(tmp)
        if not only or "locomo" in only:
            print("-- LoCoMo-dev recall", flush=True)
            report["locomo"] = locomo.run()
            if not args.no_hybrid:
                report["locomo"] |= hybrid.locomo_recall()
    RESULTS.mkdir(exist_ok=True)
    name = "latest.json" if not only else "partial.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(table(report))


def table(report: dict) -> str:
    echo = report["echo_floor"]["p50_ms"]
    lines = [
        f"machine: {report['machine']} ({report['date']})",
        f"floor, two-hop gRPC echo: p50 {echo} ms, p99 {report['echo_floor']['p99_ms']} ms",
        "",
        "| corpus | retrieval | cold | naive FTS5 p50 / p99 | Search p50 / p99 "
        "| Assemble p50 / p99 | Explain p50 / p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["retrieval"]:
        cells = [
            r.get("retrieval", "lexical"),
            f"{r['naive_fts_floor']['p50_ms']} / {r['naive_fts_floor']['p99_ms']}",
        ]
        cells += [
            f"{r[k]['p50_ms']} / {r[k]['p99_ms']}"
            for k in ("SearchMemories", "AssemblePrompt", "ExplainRetrieval")
        ]
        lines.append(
            f"| {r['scenario']} | {cells[0]} | {r['cold']:.0%} | " + " | ".join(cells[1:]) + " |"
        )
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
    for name, r in report.get("locomo", {}).items():
        lines.append(f"LoCoMo-dev {name}: recall@5 {r['recall@5']}, recall@10 {r['recall@10']}")
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
            "100k one tenant: Search p50 <= echo + naive FTS5 p50",
            base["SearchMemories"]["p50_ms"],
            echo + base["naive_fts_floor"]["p50_ms"],
        )
        for cold in (0.1, 0.5):
            r = by[("100k", cold)]
            check(
                f"100k, {cold:.0%} cold: Search p50 <= 1.10 x nothing cold",
                r["SearchMemories"]["p50_ms"],
                1.10 * base["SearchMemories"]["p50_ms"],
            )
    if ("1M-1000-tenants", 0.1) in by:
        r = by[("1M-1000-tenants", 0.1)]
        check("1M over 1,000 tenants: Search p50 <= 10 ms", r["SearchMemories"]["p50_ms"], 10)
        check("1M over 1,000 tenants: Search p99 <= 50 ms", r["SearchMemories"]["p99_ms"], 50)
    if ("1M-one-tenant", 0.0) in by:
        r = by[("1M-one-tenant", 0.0)]
        check(
            "1M one tenant: Search p50 <= naive FTS5 p50 / 20",
            r["SearchMemories"]["p50_ms"],
            r["naive_fts_floor"]["p50_ms"] / 20,
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
    hybrid_targets(report, check, out)
    if "locomo" in report:
        recall = report["locomo"]["agentmem, dated turns"]["recall@5"]
        ok = "ok  " if recall >= 0.5 else "MISS"
        out.append(f"  {ok} LoCoMo-dev recall@5 >= 0.50 (dated turns): {recall}")
    return out


def hybrid_targets(report: dict, check: Callable[..., None], out: list[str]) -> None:
    def at_least(label: str, value: float, floor: float) -> None:
        out.append(f"  {'ok  ' if value >= floor else 'MISS'} {label}: {value} (floor {floor})")

    hybrid_rows = {
        r["scenario"]: r for r in report["retrieval"] if r.get("retrieval", "").startswith("hybrid")
    }
    lexical_rows = {
        r["scenario"]: r
        for r in report["retrieval"]
        if r.get("retrieval", "lexical") == "lexical" and r["cold"] == 0.0
    }
    if "100k" in hybrid_rows and "100k" in lexical_rows:
        check(
            "100k one tenant: hybrid Search p50 <= 2 x lexical Search p50",
            hybrid_rows["100k"]["SearchMemories"]["p50_ms"],
            2 * lexical_rows["100k"]["SearchMemories"]["p50_ms"],
        )
    if "1M-1000-tenants" in hybrid_rows:
        r = hybrid_rows["1M-1000-tenants"]
        check(
            "1M over 1,000 tenants: hybrid Search p50 <= 15 ms", r["SearchMemories"]["p50_ms"], 15
        )
        check(
            "1M over 1,000 tenants: hybrid Search p99 <= 60 ms", r["SearchMemories"]["p99_ms"], 60
        )
    para = report.get("paraphrase", {}).get("hybrid, held-back half")
    if para:
        at_least("paraphrase recall@5 (held-back half, hybrid)", para["recall@5"], 0.90)
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


if __name__ == "__main__":
    main()
