"""`make bench`, the latency budget of hybrid retrieval, measured in one run: at 100k
memories in one tenant, the query's embedding (the local model, in this process), lexical
and hybrid SearchMemories and AssemblePrompt through both services.

Targets: hybrid Search p50 <= the query's embedding p50 + lexical Search p50 + 3 ms, and
AssemblePrompt p50 <= 1.5 x Search p50 (each mode against its own Search). The lexical and
the hybrid stack run side by side on copies of one corpus and are called in turn, question
by question (`bench.common.retrieval_rpcs_interleaved`), and the model's query embedding
is timed between their calls, so the three figures share the machine's conditions. Also
hybrid Search with every query asked a second time right after the first (what a cache of
query embeddings saves: with none, the same).

The corpus is `bench.corpus` (synthetic words); its vectors are random unit vectors (exact
search costs the same whatever they hold; 100k texts through the model would take 10 min).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import corpus, hybrid, servers
from bench.common import percentiles, retrieval_rpcs_interleaved, sqlite_copy

CORPUS = 100_000
SLACK_MS = 3.0
ASSEMBLE_FACTOR = 1.5


def _embedder() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    return LocalEmbedder(hybrid.model_dir(), hybrid.MODEL_ID)


def run(tmp: Path, n_questions: int = 200, size: int = CORPUS) -> dict[str, Any]:

    print(f"-- latency budget: {size:,} memories, lexical and hybrid side by side", flush=True)
    tenant = "bench-budget"
    data = tmp / "latency-budget"
    data.mkdir(exist_ok=True)
    db_path = data / "agentmem.db"
    corpus.load(f"sqlite:///{db_path}", [tenant], size)
    lexical_url = sqlite_copy(f"sqlite:///{db_path}", tmp / "latency-budget-lexical")
    hybrid.load_vectors(db_path, random_vectors=True)
    lang = corpus.Language(seed=99)
    questions = [lang.question() for _ in range(n_questions)]
    keys = [servers.key("tok-budget", tenant, servers.ALL_SCOPES)]
    embedder = _embedder()
    embedder.embed(questions[:5])
    out: dict[str, Any] = {"memories": size}
    with (
        servers.agentmem(
            tmp, keys, storage_url=lexical_url, extra_env={"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"}
        ) as lexical,
        servers.agentmem(tmp, keys, data_dir=data, extra_env=hybrid.hybrid_env()) as hybrid_,
    ):
        by = retrieval_rpcs_interleaved(
            {"lexical": lexical, "hybrid": hybrid_},
            lambda _: "tok-budget",
            questions,
            only=("SearchMemories", "AssemblePrompt"),
        )
        out["lexical"], out["hybrid"] = by["lexical"], by["hybrid"]
        embed, again, first = [], [], []
        with connect(hybrid_, "tok-budget") as client:
            for q in questions:
                t = time.perf_counter()
                embedder.embed([q])
                embed.append((time.perf_counter() - t) * 1000)
                request = retrieval_pb2.SearchMemoriesRequest(query=q + " again", limit=10)
                for samples in (first, again):
                    t = time.perf_counter()
                    client.SearchMemories(request, timeout=30)
                    samples.append((time.perf_counter() - t) * 1000)
        out["query_embedding"] = percentiles(embed)
        out["hybrid_search_first"] = percentiles(first)
        out["hybrid_search_repeated"] = percentiles(again)
    for line in table_lines({"latency_budget": out}):
        print("   " + line, flush=True)
    return out


def table_lines(report: dict[str, Any]) -> list[str]:
    r = report.get("latency_budget")
    if not r:
        return []
    cells = []
    for mode in ("lexical", "hybrid"):
        for rpc in ("SearchMemories", "AssemblePrompt"):
            cells.append(f"{mode} {rpc} p50 {r[mode][rpc]['p50_ms']} ms")
    return [
        "",
        f"latency budget at {r['memories']:,} memories (one run, side by side): query embedding "
        f"p50 {r['query_embedding']['p50_ms']} ms; " + ", ".join(cells),
        f"hybrid Search, a query asked again right after: p50 "
        f"{r['hybrid_search_repeated']['p50_ms']} ms (first asking "
        f"{r['hybrid_search_first']['p50_ms']} ms)",
    ]


def targets(report: dict[str, Any], out: list[str]) -> None:
    r = report.get("latency_budget")
    if not r:
        return

    def check(label: str, value: float, limit: float) -> None:
        ok = "ok  " if value <= limit else "MISS"
        out.append(f"  {ok} {label}: {value:.3f} ms (limit {limit:.3f} ms)")

    embed = r["query_embedding"]["p50_ms"]
    lexical = r["lexical"]["SearchMemories"]["p50_ms"]
    check(
        f"{r['memories'] // 1000}k: hybrid Search p50 <= query embedding + lexical Search p50 "
        f"+ {SLACK_MS:g} ms",
        r["hybrid"]["SearchMemories"]["p50_ms"],
        embed + lexical + SLACK_MS,
    )
    for mode in ("lexical", "hybrid"):
        check(
            f"{r['memories'] // 1000}k: {mode} AssemblePrompt p50 <= {ASSEMBLE_FACTOR} x "
            "Search p50",
            r[mode]["AssemblePrompt"]["p50_ms"],
            ASSEMBLE_FACTOR * r[mode]["SearchMemories"]["p50_ms"],
        )


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--size", type=int, default=CORPUS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-") as tmp:
        result = {"latency_budget": run(Path(tmp), args.questions, args.size)}
    lines: list[str] = []
    targets(result, lines)
    print("\n".join(lines))
