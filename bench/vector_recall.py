"""`make bench BENCH_ARGS="--only vector-recall"`: the SQLite first pass of the semantic side
(`runtime_svc.retrieval.vectors.quantized`: int8 codes, eligibility masked before the
shortlist) against the exact ranking: recall@10 of its shortlist (the runtime's
`candidates * 8` = 400) ranked exactly, and the pass's time next to the exact pass's
(float32, numpy) on the same vectors, in process.

Corpora: the bench's 100k random unit vectors (the vectors the 100k and latency-budget rows
search; the hardest case for any compression: their nearest neighbours are barely nearer
than the rest), with 10% of them not eligible; and LoCoMo-dev, every turn embedded by the
model, its questions as queries (each conversation is one tenant: every turn of the ten
ranked for each of its questions, so the pass runs on 10 tenants of about 400-700 vectors).
Target: recall@10 >= 0.98 on each.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from bench import hybrid, locomo

K = 10
SHORTLIST = 400  # the runtime's coarse candidates: retrieval.candidates (50) * COARSE_FACTOR


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def measure(
    vectors: np.ndarray, queries: np.ndarray, ok: np.ndarray | None, shortlist: int = SHORTLIST
) -> dict[str, Any]:
    from runtime_svc.retrieval.vectors import quantized

    codes, factor = quantize_all(vectors)
    found, first, exact_ms = [], [], []
    saved = quantized.EXACT_MAX
    quantized.EXACT_MAX = 0  # the int8 pass whatever the size
    try:
        for q in queries:
            t = time.perf_counter()
            sims = quantized.similarities(codes, factor, vectors, q.tolist())
            short = quantized.shortlist(sims, ok, shortlist)
            first.append((time.perf_counter() - t) * 1000)
            exact_of_short = vectors[short] @ q
            got = set(short[np.argsort(-exact_of_short, kind="stable")[:K]].tolist())
            t = time.perf_counter()
            exact = vectors @ q
            if ok is not None:
                exact = np.where(ok, exact, -np.inf)
            want = set(np.argsort(-exact, kind="stable")[:K].tolist())
            exact_ms.append((time.perf_counter() - t) * 1000)
            found.append(len(got & want) / K)
    finally:
        quantized.EXACT_MAX = saved
    return {
        "vectors": len(vectors),
        "queries": len(queries),
        "recall_at_10": round(float(np.mean(found)), 4),
        "first_pass_p50_ms": round(float(np.median(first)), 3),
        "exact_p50_ms": round(float(np.median(exact_ms)), 3),
    }


def quantize_all(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from runtime_svc.retrieval.vectors.quantized import quantize

    return quantize(vectors)


def random_corpus(n: int = 100_000, n_q: int = 200) -> dict[str, Any]:
    rng = np.random.default_rng(3)
    vectors = _unit(rng.standard_normal((n, 384)))
    queries = _unit(rng.standard_normal((n_q, 384)))
    out = measure(vectors, queries, None)
    ok = rng.random(n) >= 0.1
    out["cold_10pct"] = measure(vectors, queries, ok)
    return out


def locomo_corpus() -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    model = LocalEmbedder(hybrid.model_dir(), hybrid.MODEL_ID)
    found: dict[int, list[float]] = {SHORTLIST: [], 4 * K: []}
    sizes = []
    for conv in locomo.conversations():
        vectors = np.asarray(model.embed([t for _, t in locomo.turns(conv)]), np.float32)
        qs = [q["question"] for q in locomo.questions(conv)]
        queries = np.asarray(model.embed(qs), np.float32)
        sizes.append(len(vectors))
        for n, got in found.items():  # 400 holds most of a conversation: also 40 (4 x k)
            got += [measure(vectors, queries, None, n)["recall_at_10"]] * len(qs)
    return {
        "tenants": len(sizes),
        "vectors": int(sum(sizes)),
        "queries": len(found[SHORTLIST]),
        "recall_at_10": round(float(np.mean(found[SHORTLIST])), 4),
        "shortlist_40": round(float(np.mean(found[4 * K])), 4),
    }


def run() -> dict[str, Any]:
    print("-- vector first pass: recall@10 against exact, and its time", flush=True)
    out = {"random_100k": random_corpus(), "locomo_dev": locomo_corpus()}
    for line in lines(out):
        print("   " + line, flush=True)
    return out


def lines(r: dict[str, Any]) -> list[str]:
    a, c, lo = r["random_100k"], r["random_100k"]["cold_10pct"], r["locomo_dev"]
    return [
        f"100k random unit vectors: recall@10 {a['recall_at_10']} (10% not eligible: "
        f"{c['recall_at_10']}); int8 pass p50 {a['first_pass_p50_ms']} ms, exact float32 "
        f"{a['exact_p50_ms']} ms",
        f"LoCoMo-dev ({lo['vectors']} turns, {lo['queries']} questions): recall@10 "
        f"{lo['recall_at_10']} (shortlist of 40: {lo['shortlist_40']})",
    ]


def targets(report: dict[str, Any], out: list[str]) -> None:
    r = report.get("vector_recall")
    if not r:
        return
    for label, value in (
        ("100k random", r["random_100k"]["recall_at_10"]),
        ("100k random, 10% not eligible", r["random_100k"]["cold_10pct"]["recall_at_10"]),
        ("LoCoMo-dev", r["locomo_dev"]["recall_at_10"]),
        ("LoCoMo-dev, shortlist of 40", r["locomo_dev"]["shortlist_40"]),
    ):
        ok = "ok  " if value >= 0.98 else "MISS"
        out.append(f"  {ok} vector first pass recall@10 >= 0.98, {label}: {value}")
