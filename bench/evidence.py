"""`make bench`, evidence in the prompt: how many LoCoMo-dev questions the block that
`AssemblePrompt` injects can answer, at 500 / 1,000 / 2,000 tokens, by question type.

Each conversation is one user's memory (its own tenant); every session is inserted as one
conversation source (`bench.locomo.insert_sessions`: speaker names, the session's date as
`sent_at`). A question counts when every one of its evidence turns lies inside the message
ranges of the passages the block cites (`AssemblePromptResponse.citations`); a citation
without a passage (a whole source) covers no turn. Category 5 (adversarial) is skipped.
Also what reaches the model: the share of questions whose block text carries the answer's
words (`bench.answer_words`; an answer without a key word is counted apart).
Question types are LoCoMo's categories: 1 multi-hop, 2 temporal, 3 open-domain, 4
single-hop.

Measured with hybrid retrieval off (`retrieval.embeddings: none`, the lexical reference) and
on (the local model, SQLite only as `bench.hybrid`), each with passage recall@5 through
SearchMemories (`group_by_source: false`) on the same stack. Two references need no service:

- whole conversation, most recent: the latest messages of the conversation that fit the
  budget, rendered `speaker: text` one a line under the block's header (what a host that
  keeps the conversation itself, without memory, would have in the same room). Also the
  whole conversation's size, the budget at which it covers everything.
- naive BM25: SQLite FTS5 over single turns, the question's words OR-ed, turns packed by
  score into the budget (one that does not fit is skipped), each rendered with its session's
  date (`date speaker: text`, `bench.locomo.turns`).
- evidence alone: the evidence turns themselves, rendered the same way; a question counts
  when they fit the budget (the ceiling of any assembly at that budget); for the answer's
  words, when they also carry them (rendered with their date, as naive BM25's).

Budgets are in the service's unit (`retrieval.tokenizer`: o200k_base BPE tokens by default,
`runtime_svc.adapters.tokenizers`); the references are counted in the same unit.

    python -m bench.evidence              # lexical and hybrid
    python -m bench.retrieval --only evidence
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import statistics
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import answer_words, bpe, hybrid, locomo, servers
from runtime_svc.adapters.tokenizers import counter
from runtime_svc.assembly import FOOTER, HEADER

count_tokens = counter().count  # the service's default unit

BUDGETS = (500, 1000, 2000)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TYPES = ("single-hop", "multi-hop", "temporal", "open-domain")
LEXICAL_ENV = {"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"}

# The figures at 2,000 tokens (lexical / hybrid) and the targets.
BASELINE_2000 = {"lexical": 0.686, "hybrid": 0.722}
TARGET_OVERALL, TARGET_MULTI_HOP, TARGET_RECALL5 = 0.88, 0.55, 0.68


@dataclass(frozen=True)
class Loaded:
    """One LoCoMo conversation as stored: its tenant's token and the dia_id of every
    (source, message index)."""

    conv: dict
    token: str
    dia_of: dict[tuple[str, int], str]


class Tally:
    """Questions found over questions asked, overall and by type."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()

    def add(self, question: dict, found: bool) -> None:
        kind = CATEGORIES[question["category"]]
        self.asked[kind] += 1
        self.found[kind] += found

    def rates(self) -> dict[str, float]:
        out = {"overall": round(sum(self.found.values()) / max(sum(self.asked.values()), 1), 3)}
        for kind in TYPES:
            out[kind] = round(self.found[kind] / self.asked[kind], 3) if self.asked[kind] else 0.0
        return out | {"questions": sum(self.asked.values())}


class WordsTally(Tally):
    """Questions whose text carries the answer's words; those without a key word apart, and
    apart too the share among the questions whose evidence turns (with their dates) carry
    them (`reachable`: the others' words are the reply's to work out)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0
        self.reachable = Tally()

    def carried(self, question: dict, text: str | set[str], reachable: bool) -> bool | None:
        got = answer_words.carries(text, [str(question.get("answer", ""))])
        if got is None:
            self.skipped += 1
        else:
            self.add(question, got)
            if reachable:
                self.reachable.add(question, got)
        return got

    def rates(self) -> dict[str, Any]:
        return super().rates() | {"skipped": self.skipped, "reachable": self.reachable.rates()}


def reachable(question: dict, dated: dict[str, str]) -> bool:
    """Whether the question's evidence turns, each with its session's date, carry the answer's
    words."""
    text = "".join(dated.get(e, "") for e in question["evidence"])
    return answer_words.carries(text, [str(question.get("answer", ""))]) is True


def dated_turns(conv: dict) -> dict[str, str]:
    """`date speaker: text` of every turn by dia_id (`bench.locomo.turns`)."""
    return {dia: f"{text}\n" for dia, text in locomo.turns(conv, dated=True)}


def covered(citations: Sequence[Any], dia_of: dict[tuple[str, int], str]) -> set[str]:
    """The dia_ids inside the cited passages (a citation without a passage covers none)."""
    out: set[str] = set()
    for c in citations:
        if c.HasField("passage"):
            span = range(c.passage.message_start, c.passage.message_end + 1)
            out |= {dia_of[(c.source_id, i)] for i in span if (c.source_id, i) in dia_of}
    return out


@contextmanager
def stack(
    env: dict[str, str],
    convs: list[dict],
    postgres: bool = False,
    keep: Path | None = None,
    photos: bool = False,
) -> Iterator[tuple[str, list[Loaded]]]:
    """Both services with `env`, every conversation loaded (and embedded, with hybrid
    retrieval on); yields the gateway's address and the loaded conversations. With `keep`
    (SQLite), the database is kept in that folder and used again by a later call (loading
    and embedding LoCoMo-dev takes minutes on a busy machine). `photos`: shared photos'
    captions in the messages (`bench.locomo.content`)."""
    tag = "hybrid" if env.get("AGENTMEM_RETRIEVAL__EMBEDDINGS", "none") != "none" else "lexical"
    tokens = [f"evidence-{tag}-{i}" for i in range(len(convs))]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    marker = keep / "loaded.json" if keep is not None else None
    with contextlib.ExitStack() as stack_:
        tmp = Path(stack_.enter_context(tempfile.TemporaryDirectory()))
        if keep is not None and not postgres:
            keep.mkdir(parents=True, exist_ok=True)
            where: dict[str, Any] = {"data_dir": keep}
        else:
            url = stack_.enter_context(servers.database(tmp, f"evidence-{tag}", postgres))
            where = {"storage_url": url}
        address = stack_.enter_context(servers.agentmem(tmp, keys, extra_env=env, **where))
        if marker is not None and marker.exists():
            stored = json.loads(marker.read_text())
            yield (
                address,
                [
                    Loaded(conv, token, {(s, i): dia for s, i, dia in dias})
                    for conv, token, dias in zip(convs, tokens, stored, strict=True)
                ],
            )
            return
        loaded = []
        for conv, token in zip(convs, tokens, strict=True):
            with connect(address, token) as client:
                loaded.append(Loaded(conv, token, locomo.insert_sessions(client, conv, photos)))
        if tag == "hybrid":  # the indexer embeds every tenant's passages meanwhile
            for item in loaded:
                with connect(address, item.token) as client:
                    hybrid.wait_embedded(client)
        if marker is not None:
            marker.write_text(
                json.dumps([[[s, i, d] for (s, i), d in x.dia_of.items()] for x in loaded])
            )
        yield address, loaded


def measure(address: str, loaded: list[Loaded], budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """Evidence in the assembled block at each budget, and passage recall@5."""
    tallies = {b: Tally() for b in budgets}
    words = {b: WordsTally() for b in budgets}
    used: dict[int, list[int]] = {b: [] for b in budgets}
    bpe_used: dict[int, list[int]] = {b: [] for b in budgets}
    recall = Tally()
    for item in loaded:
        dated = dated_turns(item.conv)
        with connect(address, item.token) as client:
            for q in locomo.questions(item.conv):
                evidence = set(q["evidence"])
                reach = reachable(q, dated)
                hits = client.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(
                        query=q["question"], limit=5, group_by_source=False
                    )
                ).hits
                recall.add(q, evidence <= covered([h.citation for h in hits], item.dia_of))
                for b in budgets:
                    r = client.AssemblePrompt(
                        retrieval_pb2.AssemblePromptRequest(query=q["question"], token_budget=b)
                    )
                    tallies[b].add(q, evidence <= covered(r.citations, item.dia_of))
                    words[b].carried(q, answer_words.stems(r.context), reach)
                    used[b].append(r.tokens_used)
                    if bpe.available():
                        bpe_used[b].append(bpe.count(r.context))
    out: dict[str, Any] = {"recall@5": recall.rates()}
    for b in budgets:
        out[str(b)] = tallies[b].rates() | {
            "words": words[b].rates(),
            "tokens_used_mean": round(statistics.mean(used[b]), 1),
            **({"bpe_tokens_mean": round(statistics.mean(bpe_used[b]), 1)} if bpe_used[b] else {}),
        }
    return out


def _lines(conv: dict) -> list[tuple[str, str]]:
    """(dia_id, `speaker: text`) for every turn, in order."""
    return [
        (t["dia_id"], f"{t['speaker']}: {t['text']}\n")
        for _, ts in locomo.sessions(conv)
        for t in ts
    ]


def references(convs: list[dict], budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """The references that need no service (see the module doc)."""
    fixed = count_tokens(HEADER) + count_tokens(FOOTER)
    recent = {b: Tally() for b in budgets}
    alone = {b: Tally() for b in budgets}
    naive = {b: Tally() for b in budgets}
    naive_words = {b: WordsTally() for b in budgets}
    alone_words = {b: WordsTally() for b in budgets}
    sizes = []
    for conv in convs:
        lines = _lines(conv)
        cost = {dia: count_tokens(text) for dia, text in lines}
        sizes.append(fixed + sum(cost.values()))
        dated = dated_turns(conv)
        dated_cost = {dia: count_tokens(text) for dia, text in dated.items()}
        ranked = _naive_ranks(conv)
        for b in budgets:
            kept: set[str] = set()
            room = b - fixed
            for dia, _ in reversed(lines):
                if cost[dia] > room:
                    break
                kept.add(dia)
                room -= cost[dia]
            for q in locomo.questions(conv):
                evidence = set(q["evidence"])
                reach = reachable(q, dated)
                recent[b].add(q, evidence <= kept)
                need = fixed + sum(cost.get(e, 10**9) for e in evidence)
                alone[b].add(q, need <= b)
                packed = _pack(ranked[q["question"]], dated_cost, b - fixed)
                naive[b].add(q, evidence <= set(packed))
                naive_words[b].carried(q, "".join(dated[d] for d in packed), reach)
                fits = fixed + sum(dated_cost.get(e, 10**9) for e in evidence) <= b
                alone_words[b].carried(
                    q, "".join(dated.get(e, "") for e in evidence) if fits else "", reach
                )
    return {
        "naive BM25": {str(b): naive[b].rates() for b in budgets},
        "whole conversation, most recent": {str(b): recent[b].rates() for b in budgets},
        "evidence alone (ceiling)": {str(b): alone[b].rates() for b in budgets},
        "words": {
            "naive BM25": {str(b): naive_words[b].rates() for b in budgets},
            "evidence alone": {str(b): alone_words[b].rates() for b in budgets},
        },
        "conversation_tokens": sizes,
    }


def _naive_ranks(conv: dict) -> dict[str, list[str]]:
    """Each question's turns (dia_ids) by SQLite FTS5 bm25, the question's words OR-ed."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, body)")
    db.executemany("INSERT INTO t VALUES (?, ?)", locomo.turns(conv))
    out = {}
    for q in locomo.questions(conv):
        match = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", q["question"].lower()))
        out[q["question"]] = [
            r[0] for r in db.execute("SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,))
        ]
    db.close()
    return out


def _pack(ranked: list[str], cost: dict[str, int], room: int) -> list[str]:
    """Turns in rank order while they fit (one that does not is skipped)."""
    kept = []
    for dia in ranked:
        if cost[dia] <= room:
            kept.append(dia)
            room -= cost[dia]
        if room <= 0:
            break
    return kept


def run(postgres: bool = False, hybrid_on: bool = True) -> dict[str, Any]:
    convs = locomo.conversations()
    out: dict[str, Any] = {"references": references(convs)}
    modes = {"lexical": LEXICAL_ENV}
    if hybrid_on and not postgres:
        modes["hybrid"] = hybrid.hybrid_env()
    for label, env in modes.items():
        print(f"-- evidence in the prompt, {label}", flush=True)
        with stack(env, convs, postgres) as (address, loaded):
            out[label] = measure(address, loaded)
        print("   " + _row(label, out[label][str(BUDGETS[-1])], BUDGETS[-1]), flush=True)
    out["bpe"] = bpe.name()
    return out


def _row(label: str, r: dict[str, Any], budget: int) -> str:
    cells = [f"{r['overall']:.3f}", *(f"{r[k]:.3f}" for k in TYPES)]
    extra = []
    if "tokens_used_mean" in r:
        extra.append(f"{r['tokens_used_mean']:.0f}")
        extra.append(f"{r['bpe_tokens_mean']:.0f}" if "bpe_tokens_mean" in r else "")
    else:
        extra += ["", ""]
    return f"| {label} | {budget:,} | " + " | ".join(cells + extra) + " |"


def table_lines(report: dict[str, Any]) -> list[str]:
    ev = report.get("evidence")
    if not ev:
        return []
    lines = [
        "",
        "evidence in the prompt, LoCoMo-dev (a question counts when every evidence turn is in "
        f"a cited passage; {ev['references']['evidence alone (ceiling)']['500']['questions']} "
        "questions):",
        "| assembly | budget | overall | " + " | ".join(TYPES) + " | tokens used (mean) "
        f"| {ev.get('bpe') or 'BPE'} tokens (mean) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label in ("lexical", "hybrid"):
        if label in ev:
            lines += [_row(f"AssemblePrompt, {label}", ev[label][str(b)], b) for b in BUDGETS]
    for label in ("naive BM25", "whole conversation, most recent", "evidence alone (ceiling)"):
        if label in ev["references"]:
            lines += [_row(label, ev["references"][label][str(b)], b) for b in BUDGETS]
    sizes = ev["references"]["conversation_tokens"]
    lines.append(
        f"whole conversations: {min(sizes):,} to {max(sizes):,} tokens (all evidence at that size)"
    )
    for label in ("lexical", "hybrid"):
        if label in ev:
            r = ev[label]["recall@5"]
            lines.append(
                f"passage recall@5 through SearchMemories, {label}: {r['overall']:.3f} ("
                + ", ".join(f"{k} {r[k]:.3f}" for k in TYPES)
                + ")"
            )
    return lines + words_lines(ev)


def words_lines(ev: dict[str, Any]) -> list[str]:
    """The answer's words in the block, by question type, at every budget."""
    rows = [(f"AssemblePrompt, {m}", ev[m], True) for m in ("lexical", "hybrid") if m in ev]
    rows += [(k, v, False) for k, v in ev["references"].get("words", {}).items()]
    if not rows or "words" not in rows[0][1][str(BUDGETS[0])]:
        return []

    def of(r: dict[str, Any], b: int, nested: bool) -> dict[str, Any]:
        out: dict[str, Any] = r[str(b)]["words"] if nested else r[str(b)]
        return out

    first = of(rows[0][1], BUDGETS[0], rows[0][2])
    lines = [
        "",
        f"the answer's words in the block, LoCoMo-dev ({first['questions']} questions with key "
        f"words, {first['skipped']} without; `bench.answer_words`):",
        "| assembly | budget | overall | " + " | ".join(TYPES) + " | overall, the "
        f"{first['reachable']['questions']} whose evidence turns carry the words |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, r, nested in rows:
        for b in BUDGETS:
            w = of(r, b, nested)
            cells = [
                f"{w['overall']:.3f}",
                *(f"{w[k]:.3f}" for k in TYPES),
                f"{w['reachable']['overall']:.3f}",
            ]
            lines.append(f"| {label} | {b:,} | " + " | ".join(cells) + " |")
    return lines


def targets(report: dict[str, Any], out: list[str]) -> None:
    ev = report.get("evidence")
    if not ev:
        return

    def at_least(label: str, value: float, floor: float) -> None:
        out.append(f"  {'ok  ' if value >= floor else 'MISS'} {label}: {value} (floor {floor})")

    best = ev.get("hybrid") or ev["lexical"]
    mode = "hybrid" if "hybrid" in ev else "lexical"
    at_least(f"evidence in 2,000 tokens ({mode})", best["2000"]["overall"], TARGET_OVERALL)
    at_least(
        f"evidence in 2,000 tokens, multi-hop ({mode})", best["2000"]["multi-hop"], TARGET_MULTI_HOP
    )
    at_least(f"LoCoMo-dev passage recall@5 ({mode})", best["recall@5"]["overall"], TARGET_RECALL5)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--no-hybrid", action="store_true")
    args = parser.parse_args()
    result = {"evidence": run(args.postgres, not args.no_hybrid)}
    print("\n".join(table_lines(result)))
    lines: list[str] = []
    targets(result, lines)
    print("\n".join(lines))
