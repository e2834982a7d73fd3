"""Prompt-assembly experiments outside the service, on LoCoMo-dev only, through the public
API only: SearchMemories' ranked passages (`group_by_source: false`, up to 100) are fetched
once per question and stack and cached, then assembly strategies are played client-side,
each measured with `bench.evidence`'s protocol (a question counts when every evidence turn is
among the messages the block holds).

A block is rendered as the service would: its header and footer, then per conversation
(session) one citation line with the session's date, then its chosen messages in order,
`speaker: text` one a line, "…" between runs that are not adjacent. The budget counts every
token of that (tokens are counted per line, so the block's size is the sum of its lines).

    python -m bench.assembly_lab                    # every strategy, both units
    python -m bench.assembly_lab --only lever,decompose
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import bpe, evidence, hybrid, locomo
from runtime_svc.assembly import FOOTER, HEADER
from runtime_svc.domain.text import count_tokens

RESULTS = Path(__file__).resolve().parent / "results"
BUDGETS = (500, 1000, 2000)
LIMIT = 100

Key = tuple[str, int]  # (source_id, message index)


@dataclass(frozen=True)
class Hit:
    source_id: str
    start: int
    end: int
    score: float


@dataclass
class Conversation:
    """A loaded LoCoMo conversation seen from the client: each (source, message)'s dia_id,
    line and session date."""

    conv: dict
    dia_of: dict[Key, str]
    line: dict[Key, str] = field(default_factory=dict)
    date: dict[str, str] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    speakers: tuple[str, ...] = ()

    @classmethod
    def of(cls, conv: dict, dia_of: dict[Key, str], photos: bool = False) -> Conversation:
        c = cls(conv, dia_of, speakers=(conv["speaker_a"], conv["speaker_b"]))
        turn = {t["dia_id"]: t for _, ts in locomo.sessions(conv) for t in ts}
        date_of = {}
        for key, value in conv.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
                for t in value:
                    date_of[t["dia_id"]] = _day(conv.get(key + "_date_time", ""))
        for (source, i), dia in dia_of.items():
            c.line[(source, i)] = f"{turn[dia]['speaker']}: {locomo.content(turn[dia], photos)}\n"
            c.date[source] = date_of[dia]
            c.size[source] = max(c.size.get(source, 0), i + 1)
        return c


def _day(raw: str) -> str:
    """A session's date as the service renders a passage's ("08 May 2023")."""
    from datetime import datetime

    try:
        return datetime.strptime(raw, "%I:%M %p on %d %B, %Y").strftime("%d %B %Y")
    except ValueError:
        return raw


Counter_ = Callable[[str], int]


class Block:
    """Messages chosen so far and their cost in tokens (per line, so additive). `dates`: each
    session's citation line carries its date; `ids`: every run of messages is cited by its
    source id and range, as the service's block does today (`(src_…@1#3-4)`), instead of
    one short label per session."""

    def __init__(
        self,
        conv: Conversation,
        count: Counter_,
        budget: int,
        *,
        dates: bool = True,
        ids: bool = False,
    ) -> None:
        self.conv, self.count, self.budget = conv, count, budget
        self.dates, self.ids = dates, ids
        self.chosen: set[Key] = set()
        self.used = count(HEADER) + count(FOOTER)
        self.question = ""

    def cost(self, keys: Iterable[Key]) -> int:
        new = sorted(set(keys) - self.chosen)
        if not new:
            return 0
        total = 0
        sources = {s for s, _ in self.chosen}
        for source in {s for s, _ in new}:
            if source not in sources:  # the session's citation line, with its date
                date = self.conv.date[source] if self.dates else ""
                total += self.count(f"[99] {date}\n")
        for key in new:
            total += self.count(self.conv.line[key])
            source, i = key
            if (source, i - 1) not in self.chosen and (source, i - 1) not in new:
                # a run starts: "…" between runs, or its source id and range
                total += self.count(f"({source}@1#{i}-{i + 1}) ") if self.ids else (i > 0)
        return total

    def add(self, keys: Iterable[Key]) -> bool:
        keys = [k for k in keys if k in self.conv.line]
        cost = self.cost(keys)
        if not cost or self.used + cost > self.budget:
            return False
        self.chosen |= set(keys)
        self.used += cost
        return True

    def dias(self) -> set[str]:
        return {self.conv.dia_of[k] for k in self.chosen}


def messages(h: Hit) -> list[Key]:
    return [(h.source_id, i) for i in range(h.start, h.end + 1)]


# -- strategies: (hits of the question, hits of its sub-queries, block) -> fills the block --


def lever(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The issue's lever: passages in score order, each adding its messages not already in
    the block (only new ones cost)."""
    for h in hits:
        block.add(messages(h))


def skip_overlap(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """What the service does today: a passage overlapping one already included is skipped."""
    taken: list[Hit] = []
    for h in hits[:50]:
        if any(o.source_id == h.source_id and o.start <= h.end and h.start <= o.end for o in taken):
            continue
        if block.add(messages(h)):
            taken.append(h)


def own_message_first(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Each passage's own message (its last) in score order; then, budget left, the lever."""
    for h in hits:
        block.add([(h.source_id, h.end)])
    lever(hits, subs, block)


def with_reply(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Each passage with the message after it (an answer often follows the question)."""
    for h in hits:
        block.add([*messages(h), (h.source_id, h.end + 1)])


def reply_if_asked(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Each passage with the message after it only when the passage's own message asks
    something (ends a sentence with "?"): the answer follows a question."""
    for h in hits:
        own = block.conv.line.get((h.source_id, h.end), "")
        asked = "?" in own
        block.add([*messages(h), *([(h.source_id, h.end + 1)] if asked else [])])


def speaker_then_reply_if_asked(
    hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block
) -> None:
    """The named speaker's own messages first, then `reply_if_asked`."""
    _speaker_pass(hits, block)
    reply_if_asked(hits, subs, block)


def interleave(lists: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Round-robin over ranked lists, first appearance kept."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for rank in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if rank < len(x):
                h = x[rank]
                if (h.source_id, h.start, h.end) not in seen:
                    seen.add((h.source_id, h.start, h.end))
                    out.append(h)
    return out


def decompose(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The whole question's top 3, then the sub-queries' lists and the question's in turn."""
    lever(hits[:3], subs, block)
    lever(interleave([hits, *subs]) if subs else hits, subs, block)


def decompose_head(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Each sub-query's best passage after the question's top 3, then the question's list."""
    lever(hits[:3], subs, block)
    for s in subs:
        lever(s[:2], subs, block)
    lever(hits, subs, block)


def session_cap(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """A first pass taking at most 3 passages per session, then the lever."""
    per: dict[str, int] = {}
    for h in hits:
        if per.get(h.source_id, 0) < 3 and block.add(messages(h)):
            per[h.source_id] = per.get(h.source_id, 0) + 1
    lever(hits, subs, block)


def _speaker_pass(hits: Sequence[Hit], block: Block, reply: bool = False) -> None:
    """When the question names one of the conversation's speakers (only one): the passages
    whose own message is that speaker's, only that message (`reply`: and the one after)."""
    named = [n for n in block.conv.speakers if n in block.question]
    if len(named) != 1:
        return
    for h in hits:
        if block.conv.line.get((h.source_id, h.end), "").startswith(named[0] + ":"):
            block.add([(h.source_id, h.end), *([(h.source_id, h.end + 1)] if reply else [])])


def speaker_first(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The named speaker's own messages first (`_speaker_pass`), then the lever."""
    _speaker_pass(hits, block)
    lever(hits, subs, block)


def speaker_then_reply(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The named speaker's own messages first, then passage + reply."""
    _speaker_pass(hits, block)
    with_reply(hits, subs, block)


def speaker_reply_pairs(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The named speaker's own messages with the reply to each first, then passage + reply."""
    _speaker_pass(hits, block, reply=True)
    with_reply(hits, subs, block)


def stripped_merge(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """The question's list and its sub-queries' (the question without the speakers' names
    among them) interleaved, own messages first, then the lever."""
    merged = interleave([hits, *subs]) if subs else list(hits)
    own_message_first(merged, subs, block)


# -- a reranking stage with the local model (all-MiniLM-L6-v2, offline), message by message --

VECTORS: dict[str, Any] = {}  # question text, or "dia_id" / "dia_id+photos": unit vector


def embed_all(photos: bool) -> None:
    """Unit vectors of every question and every message (cached in `RESULTS`)."""
    suffix = "+photos" if photos else ""
    path = RESULTS / f"assembly-lab-vectors{suffix}.npz"
    convs = locomo.conversations()
    keys, texts = [], []
    for conv in convs:
        for q in locomo.questions(conv):
            keys.append(q["question"])
            texts.append(q["question"])
        for _, ts in locomo.sessions(conv):
            for t in ts:
                keys.append(t["dia_id"] + suffix + "@" + conv["speaker_a"])
                texts.append(f"{t['speaker']}: {locomo.content(t, photos)}")
    if path.exists():
        stored = np.load(path)
        matrix = stored["v"]
    else:
        print(f"-- embedding {len(texts)} questions and messages", flush=True)
        matrix = np.asarray(hybrid_embedder().embed(texts), dtype="float32")
        np.savez(path, v=matrix)
    VECTORS.update({k: matrix[i] for i, k in enumerate(keys)})
    VECTORS["__suffix__"] = suffix


def hybrid_embedder() -> Any:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from runtime_svc.retrieval.embedders.local_embeddings import LocalEmbedder

    return LocalEmbedder(hybrid.model_dir(), hybrid.MODEL_ID)


def _cos(block: Block, key: Key) -> float:
    dia = block.conv.dia_of.get(key)
    if dia is None:
        return -1.0
    v = VECTORS[dia + VECTORS["__suffix__"] + "@" + block.conv.speakers[0]]
    return float(v @ VECTORS[block.question])


def reranked(hits: Sequence[Hit], block: Block, k: int = 60) -> list[Hit]:
    """The hits in reciprocal-rank fusion of their order and their messages' best cosine
    with the question."""
    by_cos = sorted(
        range(len(hits)),
        key=lambda i: (
            -max(_cos(block, (hits[i].source_id, j)) for j in range(hits[i].start, hits[i].end + 1))
        ),
    )
    cos_rank = {i: r for r, i in enumerate(by_cos)}
    order = sorted(range(len(hits)), key=lambda i: -(1 / (k + i) + 1 / (k + cos_rank[i])))
    return [hits[i] for i in order]


def rerank_reply(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Passage + reply over the hits reranked by message cosine (`reranked`)."""
    with_reply(reranked(hits, block), subs, block)


def semantic_messages(hits: Sequence[Hit], subs: Sequence[Sequence[Hit]], block: Block) -> None:
    """Passage + reply over the hits interleaved with the conversation's messages ranked by
    cosine alone (each a one-message passage): candidates beyond the service's 100."""
    keys = sorted(block.conv.line, key=lambda key: -_cos(block, key))[:100]
    extra = [Hit(s, i, i, 0.0) for s, i in keys]
    with_reply(interleave([hits, extra]), subs, block)


STRATEGIES: dict[str, Callable[[Sequence[Hit], Sequence[Sequence[Hit]], Block], None]] = {
    "skip overlapping passages (today, top 50)": skip_overlap,
    "lever: top 100, new messages only": lever,
    "own message first, then lever": own_message_first,
    "passage + reply": with_reply,
    "passage + reply when asked": reply_if_asked,
    "speaker first, then passage + reply when asked": speaker_then_reply_if_asked,
    "3 per session first, then lever": session_cap,
    "decomposed, interleaved": decompose,
    "decomposed, heads first": decompose_head,
    "speaker's own messages first, then lever": speaker_first,
    "decomposed (names stripped), own messages first": stripped_merge,
    "speaker's own messages first, then passage + reply": speaker_then_reply,
    "speaker's own messages + reply first, then passage + reply": speaker_reply_pairs,
    "reranked by message cosine, passage + reply": rerank_reply,
    "+ messages by cosine interleaved, passage + reply": semantic_messages,
}


VARIANTS = {
    "no dates": {"dates": False},
    "cited by source id and range per run (today's format)": {"ids": True},
}


# -- query decomposition ------------------------------------------------------------------

_SPLIT = re.compile(r"\b(?:and|or|both|as well as|versus|vs)\b|[,;]", re.IGNORECASE)


def sub_queries(question: str, names: Sequence[str]) -> list[str]:
    """Parts of a question that names several people, events or times: one query per person
    named (with the rest of the question), and the parts split at "and"/commas when each has
    a content word. Empty for a simple question."""
    from runtime_svc.domain.text import query_terms

    out = []
    named = [n for n in names if re.search(rf"\b{re.escape(n)}\b", question)]
    if len(named) > 1:
        for n in named:
            rest = question
            for other in named:
                if other != n:
                    rest = re.sub(rf"\b{re.escape(other)}('s)?\b", "", rest)
            out.append(rest)
    if named:  # the speakers' names are in every passage: the question without them
        rest = question
        for n in named:
            rest = re.sub(rf"\b{re.escape(n)}('s)?\b", "", rest)
        out.append(" ".join(rest.split()))
    parts = [p.strip() for p in _SPLIT.split(question) if p and p.strip()]
    if len(parts) > 1 and all(len(query_terms(p)) >= 1 for p in parts):
        out += parts
    return [q for q in dict.fromkeys(out) if q != question and query_terms(q)]


# -- fetch and cache ---------------------------------------------------------------------


def fetch(modes: Sequence[str]) -> dict[str, Any]:
    """Every question's (and sub-query's) top passages on each stack, and AssemblePrompt's
    citations at each budget; cached per stack in `RESULTS` (assembly-lab-MODE.json)."""
    convs = locomo.conversations()
    out: dict[str, Any] = {}
    for mode in modes:
        path = RESULTS / f"assembly-lab-{mode}.json"
        if path.exists():
            out[mode] = json.loads(path.read_text())
            continue
        env = hybrid.hybrid_env() if mode.startswith("hybrid") else evidence.LEXICAL_ENV
        print(f"-- fetching {mode}", flush=True)
        with evidence.stack(
            env, convs, keep=RESULTS / f"locomo-{mode}", photos=mode.endswith("+photos")
        ) as (address, loaded):
            out[mode] = [_fetch_one(address, item) for item in loaded]
        RESULTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(out[mode]))
    return out


def _fetch_one(address: str, item: evidence.Loaded) -> dict[str, Any]:
    names = [item.conv["speaker_a"], item.conv["speaker_b"]]
    queries: dict[str, list[list[Any]]] = {}
    assembled: dict[str, dict[str, list[list[Any]]]] = {}
    with connect(address, item.token) as client:

        def search(q: str) -> list[list[Any]]:
            hits = client.SearchMemories(
                retrieval_pb2.SearchMemoriesRequest(query=q, limit=LIMIT, group_by_source=False)
            ).hits
            return [
                [h.source_id, h.passage.message_start, h.passage.message_end, h.score]
                for h in hits
                if h.HasField("passage")
            ]

        for q in locomo.questions(item.conv):
            for query in [q["question"], *sub_queries(q["question"], names)]:
                if query not in queries:
                    queries[query] = search(query)
            assembled[q["question"]] = {}
            for b in BUDGETS:
                r = client.AssemblePrompt(
                    retrieval_pb2.AssemblePromptRequest(query=q["question"], token_budget=b)
                )
                assembled[q["question"]][str(b)] = [
                    [c.source_id, c.passage.message_start, c.passage.message_end]
                    for c in r.citations
                    if c.HasField("passage")
                ]
    return {
        "dia_of": [[s, i, d] for (s, i), d in item.dia_of.items()],
        "queries": queries,
        "assembled": assembled,
    }


# -- evaluation --------------------------------------------------------------------------


def evaluate(
    mode: str,
    data: list[dict[str, Any]],
    strategy: Callable[[Sequence[Hit], Sequence[Sequence[Hit]], Block], None],
    count: Counter_,
    budgets: Sequence[int] = BUDGETS,
    **options: bool,
) -> dict[str, dict[str, float]]:
    tallies = {b: evidence.Tally() for b in budgets}
    used: dict[int, list[int]] = {b: [] for b in budgets}
    for conv, d in zip(locomo.conversations(), data, strict=True):
        c = Conversation.of(
            conv, {(s, i): dia for s, i, dia in d["dia_of"]}, photos=mode.endswith("+photos")
        )
        names = [conv["speaker_a"], conv["speaker_b"]]
        for q in locomo.questions(conv):
            hits = [Hit(*h) for h in d["queries"][q["question"]]]
            subs = [[Hit(*h) for h in d["queries"][s]] for s in sub_queries(q["question"], names)]
            for b in budgets:
                block = Block(c, count, b, **options)
                block.question = q["question"]
                strategy(hits, subs, block)
                tallies[b].add(q, set(q["evidence"]) <= block.dias())
                used[b].append(block.used)
    return {
        str(b): tallies[b].rates() | {"used_mean": round(statistics.mean(used[b]), 1)}
        for b in budgets
    }


def product(
    mode: str,
    data: list[dict[str, Any]],
    count: Counter_,
    budgets: Sequence[int] = BUDGETS,
) -> dict[str, dict[str, float]]:
    """The service's own assembly (`runtime_svc.assembly`) over the cached hits: the
    block's citations decide, as in `bench.evidence`."""
    from runtime_svc import assembly
    from runtime_svc.domain.passages import Range
    from runtime_svc.domain.query import Query

    tallies = {b: evidence.Tally() for b in budgets}
    for conv, d in zip(locomo.conversations(), data, strict=True):
        c = Conversation.of(
            conv, {(s, i): dia for s, i, dia in d["dia_of"]}, photos=mode.endswith("+photos")
        )
        convs = {
            source: assembly.Conversation(
                tuple(
                    tuple(c.line[(source, i)].rstrip("\n").split(": ", 1))  # type: ignore[misc]
                    for i in range(size)
                ),
                c.date[source],
            )
            for source, size in c.size.items()
        }
        for q in locomo.questions(conv):
            cands = [
                assembly.Candidate(s, 1, "", Range(a, z), convs[s])
                for s, a, z, _ in d["queries"][q["question"]]
            ]
            for b in budgets:
                block = assembly.assemble(cands, Query.of(q["question"]), b, count)
                cited = {
                    c.dia_of[(x.source_id, i)]
                    for x in block.cited
                    if x.passage is not None
                    for i in range(x.passage.start, x.passage.end + 1)
                }
                tallies[b].add(q, set(q["evidence"]) <= cited)
    return {str(b): tallies[b].rates() for b in budgets}


def service(data: list[dict[str, Any]], budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """AssemblePrompt's own blocks (as fetched), by the same protocol."""
    tallies = {b: evidence.Tally() for b in budgets}
    for conv, d in zip(locomo.conversations(), data, strict=True):
        dia_of = {(s, i): dia for s, i, dia in d["dia_of"]}
        for q in locomo.questions(conv):
            for b in budgets:
                cited = {
                    dia_of[(s, i)]
                    for s, a, z in d["assembled"][q["question"]][str(b)]
                    for i in range(a, z + 1)
                }
                tallies[b].add(q, set(q["evidence"]) <= cited)
    return {str(b): tallies[b].rates() for b in budgets}


def recall_at(data: list[dict[str, Any]], k: int = 5) -> dict[str, float]:
    tally = evidence.Tally()
    for conv, d in zip(locomo.conversations(), data, strict=True):
        dia_of = {(s, i): dia for s, i, dia in d["dia_of"]}
        for q in locomo.questions(conv):
            top = d["queries"][q["question"]][:k]
            cited = {dia_of[(s, i)] for s, a, z, _ in top for i in range(a, z + 1)}
            tally.add(q, set(q["evidence"]) <= cited)
    return tally.rates()


def window_recall(before: int, photos: bool = False) -> dict[str, float]:
    """Passage recall@5 (lexical) with passages of `before` previous messages, and the mean
    tokens of the five passages (a wider window covers more turns, and costs more)."""
    env = evidence.LEXICAL_ENV | {"AGENTMEM_RETRIEVAL__PASSAGES__BEFORE": str(before)}
    tally, sizes = evidence.Tally(), []
    with evidence.stack(env, locomo.conversations(), photos=photos) as (address, loaded):
        for item in loaded:
            c = Conversation.of(item.conv, item.dia_of, photos)
            with connect(address, item.token) as client:
                for q in locomo.questions(item.conv):
                    hits = client.SearchMemories(
                        retrieval_pb2.SearchMemoriesRequest(
                            query=q["question"], limit=5, group_by_source=False
                        )
                    ).hits
                    keys = {
                        (h.source_id, i)
                        for h in hits
                        for i in range(h.passage.message_start, h.passage.message_end + 1)
                    }
                    tally.add(q, set(q["evidence"]) <= {item.dia_of[k] for k in keys})
                    sizes.append(sum(count_tokens(c.line[k]) for k in keys))
    return tally.rates() | {"tokens_of_top5": round(statistics.mean(sizes), 1)}


def row(label: str, r: dict[str, Any]) -> str:
    cells = []
    for b in BUDGETS:
        x = r[str(b)]
        cells.append(f"{x['overall']:.3f}")
    x = r["2000"]
    cells += [f"{x[k]:.3f}" for k in evidence.TYPES]
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--only", default="", help="comma-separated strategy name prefixes")
    parser.add_argument("--unit", default="words,bpe", help="words (the service's) and/or bpe")
    parser.add_argument("--windows", default="", help="passage windows to measure, e.g. 0,2")
    args = parser.parse_args()
    for before in [int(x) for x in args.windows.split(",") if x]:
        print(f"window {before} before: {window_recall(before)}", flush=True)
    if args.windows:
        return
    modes = args.modes.split(",")
    data = fetch(modes)
    counters: dict[str, Counter_] = {"words": count_tokens}
    if bpe.available():
        counters[bpe.name()] = bpe.count
    units = [u for u in counters if u == "words" or "bpe" in args.unit]
    only = [x for x in args.only.split(",") if x]
    head = "| strategy | 500 | 1,000 | 2,000 | " + " | ".join(evidence.TYPES) + " (at 2,000) |"
    for mode in modes:
        if not only or any(o.startswith(("reranked", "+ messages")) for o in only):
            embed_all(mode.endswith("+photos"))
        r5 = recall_at(data[mode])
        print(f"\n{mode}: passage recall@5 {r5['overall']:.3f}")
        print(head)
        print("|---|---|---|---|---|---|---|---|")
        print(row("AssemblePrompt (service, its own token unit)", service(data[mode])))
        for unit in units:
            print(
                row(
                    f"runtime_svc.assembly [{unit}]",
                    product(mode, data[mode], counters[unit]),
                )
            )
            for name, strategy in STRATEGIES.items():
                if only and not any(name.startswith(o) for o in only):
                    continue
                print(row(f"{name} [{unit}]", evaluate(mode, data[mode], strategy, counters[unit])))
            for label, options in VARIANTS.items():
                result = evaluate(mode, data[mode], lever, counters[unit], **options)
                print(row(f"lever, {label} [{unit}]", result))


if __name__ == "__main__":
    main()
