"""`make bench BENCH_ARGS="--only beam"`: evidence in the prompt on long agent sessions
(BEAM-dev, ten 100k-token chats between a user and an assistant about a project, often code).

BEAM: "Beyond a Million Tokens: Benchmarking and Enhancing Long-Term Memory in LLMs",
Tavakoli et al., arXiv 2510.27246 (chats/100K, chats 1-10: the development half).

Each chat is one user's memory (its own tenant); each batch of the chat is stored as one
conversation (roles kept, the batch's time anchor as every message's `sent_at`), in as few
inserts as the service's conversation limits allow (`limits.max_messages_per_insert`,
`limits.max_conversation_chars`). Every question with evidence (abstention questions have
none) is sent to AssemblePrompt at 1,000 / 2,000 / 4,000 / 8,000 tokens; it counts when
every one of its source messages lies inside a passage the block cites (a citation of a part
of a message covers that message). Also what reaches the model: the share of the fact
questions (`FACT_ABILITIES`) whose block text carries the answer's words, each rubric item's
key words (`bench.answer_words`). By ability, next to two references computed in the same
run over the same messages, with tokens counted as characters / 4:

- naive BM25: SQLite FTS5 over single messages, the question's words OR-ed, messages packed
  by score into the budget (one that does not fit is skipped);
- evidence alone (the ceiling): the source messages themselves fit the budget (and, for the
  answer's words, their text carries them).

Also AssemblePrompt's latency at 8,000 tokens on one chat next to the two-hop echo floor, and
an append of one turn to that chat's last conversation (`bench.append_latency`).

    python -m bench.beam                      # all ten chats, lexical and hybrid
    python -m bench.beam --fast               # chats 1-2, lexical, 2,000 tokens
    python -m bench.beam --chats 1,3 --budgets 2000 --no-hybrid
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2, sources_pb2
from bench import answer_words, append_latency, hybrid, servers
from bench.common import echo_floor, timed
from bench.locomo import ROOT

DATA = next(
    (
        d / "data" / "beam-dev"
        for d in (ROOT.parent / "shared", ROOT.parent.parent / "shared")
        if (d / "data" / "beam-dev").is_dir()
    ),
    ROOT.parent / "shared" / "data" / "beam-dev",
)
BUDGETS = (1000, 2000, 4000, 8000)
ABILITIES = (
    "information_extraction",
    "multi_session_reasoning",
    "knowledge_update",
    "temporal_reasoning",
    "event_ordering",
    "contradiction_resolution",
    "instruction_following",
    "preference_following",
    "summarization",
)
# Questions with a stated answer: their rubric items are what the block should carry.
FACT_ABILITIES = (
    "information_extraction",
    "knowledge_update",
    "temporal_reasoning",
    "multi_session_reasoning",
    "contradiction_resolution",
)
LEXICAL_ENV = {"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"}
# What one insert may hold, as the service's defaults allow (`limits.*`).
INSERT_MESSAGES, INSERT_CHARS = 1_000, 1_000_000

TARGET_2000, TARGET_4000, TARGET_ABOVE_NAIVE = 0.65, 0.80, 0.25
TARGET_P50_MS = 15.0
TARGET_WORDS_2000 = 0.92  # the answer's words in the block, fact questions


@dataclass(frozen=True)
class Chat:
    number: int
    batches: list[tuple[int, list[dict]]]  # (sent_at seconds, messages in order)
    # (ability, question, source message ids, answer items: rubric items of a fact question)
    questions: list[tuple[str, str, set[int], list[str]]]

    def messages(self) -> dict[int, dict]:
        return {m["id"]: m for _, ms in self.batches for m in ms}


def _ids(raw: Any) -> set[int]:
    """Every message id of a question's `source_chat_ids` (a list, a dict of lists, nested)."""
    if isinstance(raw, dict):
        return set().union(*(_ids(v) for v in raw.values())) if raw else set()
    if isinstance(raw, list):
        return set().union(*(_ids(v) for v in raw)) if raw else set()
    return {int(raw)}


def _anchor(messages: list[dict]) -> int:
    raw = next((m["time_anchor"] for m in messages if m.get("time_anchor")), "")
    try:
        return int(datetime.strptime(raw, "%B-%d-%Y").replace(tzinfo=UTC).timestamp())
    except ValueError:
        return 0


def load(numbers: Sequence[int], data_dir: Path = DATA) -> list[Chat]:
    out = []
    for n in numbers:
        batches = json.loads((data_dir / str(n) / "chat.json").read_text())
        qs = json.loads((data_dir / str(n) / "q.json").read_text())
        stored = []
        for b in batches:
            ms = [m for turn in b["turns"] for m in turn]
            stored.append((_anchor(ms), ms))
        questions = [
            (
                ability,
                q["question"],
                _ids(q.get("source_chat_ids")),
                answer_words.rubric_items(q.get("rubric", [])) if ability in FACT_ABILITIES else [],
            )
            for ability in ABILITIES
            for q in qs.get(ability, [])
            if _ids(q.get("source_chat_ids"))
        ]
        out.append(Chat(n, stored, questions))
    return out


def chunks(messages: list[dict], max_messages: int, max_chars: int) -> list[list[dict]]:
    """A batch cut into as few inserts as the limits allow (in order)."""
    out: list[list[dict]] = [[]]
    size = 0
    for m in messages:
        n = len(m["content"])
        if out[-1] and (len(out[-1]) >= max_messages or size + n > max_chars):
            out.append([])
            size = 0
        out[-1].append(m)
        size += n
    return out


def insert(
    client: Any, chat: Chat, max_messages: int, max_chars: int
) -> dict[tuple[str, int], int]:
    """Every batch as conversations; the message id of each (source, message index)."""
    id_of: dict[tuple[str, int], int] = {}
    for when, messages in chat.batches:
        sent_at = Timestamp(seconds=when) if when else None
        for part in chunks(messages, max_messages, max_chars):
            r = client.InsertMemory(
                sources_pb2.InsertMemoryRequest(
                    messages=[
                        sources_pb2.Message(
                            role=m["role"], content=m["content"][:max_chars], sent_at=sent_at
                        )
                        for m in part
                    ]
                ),
                timeout=600,
            )
            for i, m in enumerate(part):
                id_of[(r.source_id, i)] = m["id"]
    return id_of


def covered(citations: Sequence[Any], id_of: dict[tuple[str, int], int]) -> set[int]:
    out: set[int] = set()
    for c in citations:
        if c.HasField("passage"):
            span = range(c.passage.message_start, c.passage.message_end + 1)
            out |= {id_of[(c.source_id, i)] for i in span if (c.source_id, i) in id_of}
    return out


class Tally:
    def __init__(self) -> None:
        self.found: Counter[str] = Counter()
        self.asked: Counter[str] = Counter()

    def add(self, ability: str, found: bool) -> None:
        self.asked[ability] += 1
        self.found[ability] += found

    def rates(self) -> dict[str, Any]:
        asked = sum(self.asked.values())
        out: dict[str, Any] = {"overall": round(sum(self.found.values()) / max(asked, 1), 3)}
        for a in ABILITIES:
            if self.asked[a]:
                out[a] = round(self.found[a] / self.asked[a], 3)
        return out | {"questions": asked}


class WordsTally(Tally):
    """Fact questions whose text carries the answer's words; those without a key word apart,
    and apart too the share among the questions whose source messages carry them
    (`reachable`: the others' words are the reply's to work out, a count or a duration)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0
        self.reachable = Tally()

    def carried(
        self, ability: str, text: str | set[str], items: list[str], reachable: bool
    ) -> bool | None:
        got = answer_words.carries(text, items)
        if got is None:
            self.skipped += 1
        else:
            self.add(ability, got)
            if reachable:
                self.reachable.add(ability, got)
        return got

    def rates(self) -> dict[str, Any]:
        return super().rates() | {"skipped": self.skipped, "reachable": self.reachable.rates()}


def _cost(text: str) -> int:
    return -(-len(text) // 4)


def references(chats: list[Chat], budgets: Sequence[int]) -> dict[str, Any]:
    """Naive BM25 and the ceiling (see the module doc)."""
    naive = {b: Tally() for b in budgets}
    alone = {b: Tally() for b in budgets}
    naive_words = {b: WordsTally() for b in budgets}
    alone_words = {b: WordsTally() for b in budgets}
    for chat in chats:
        by_id = chat.messages()
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(mid UNINDEXED, body)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, m["content"]) for i, m in by_id.items()])
        for ability, question, ids, items in chat.questions:
            words = re.findall(r"\w+", question.lower())
            match = " OR ".join(f'"{w}"' for w in words)
            ranked = [
                int(r[0])
                for r in db.execute("SELECT mid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,))
            ]
            need = sum(_cost(by_id[i]["content"]) for i in ids)
            reach = answer_words.carries(_text(by_id, ids), items) is True
            for b in budgets:
                kept, room = set(), b
                for i in ranked:
                    c = _cost(by_id[i]["content"])
                    if c <= room:
                        kept.add(i)
                        room -= c
                    if room <= 0:
                        break
                naive[b].add(ability, ids <= kept)
                alone[b].add(ability, need <= b)
                if ability in FACT_ABILITIES:
                    naive_words[b].carried(ability, _text(by_id, kept), items, reach)
                    evidence = _text(by_id, ids) if need <= b else ""
                    alone_words[b].carried(ability, evidence, items, reach)
        db.close()
    return {
        "naive BM25": {str(b): naive[b].rates() for b in budgets},
        "evidence alone (ceiling)": {str(b): alone[b].rates() for b in budgets},
        "words": {
            "naive BM25": {str(b): naive_words[b].rates() for b in budgets},
            "evidence alone": {str(b): alone_words[b].rates() for b in budgets},
        },
    }


def _text(by_id: dict[int, dict], ids: set[int]) -> str:
    return "\n".join(by_id[i]["content"] for i in sorted(ids) if i in by_id)


def measure(
    address: str, loaded: list[tuple[Chat, str, dict]], budgets: Sequence[int]
) -> dict[str, Any]:
    """Evidence cited and, for fact questions, the answer's words in the block; `facts`
    lists each fact question's outcome at each budget (what `bench.beam --misses` reads)."""
    tallies = {b: Tally() for b in budgets}
    words = {b: WordsTally() for b in budgets}
    used: dict[int, list[int]] = {b: [] for b in budgets}
    facts: list[dict[str, Any]] = []
    for chat, token, id_of in loaded:
        by_id = chat.messages()
        with connect(address, token) as client:
            for ability, question, ids, items in chat.questions:
                for b in budgets:
                    r = client.AssemblePrompt(
                        retrieval_pb2.AssemblePromptRequest(query=question, token_budget=b),
                        timeout=60,
                    )
                    cited = ids <= covered(r.citations, id_of)
                    tallies[b].add(ability, cited)
                    used[b].append(r.tokens_used)
                    if ability in FACT_ABILITIES:
                        block = answer_words.stems(r.context)
                        reach = answer_words.carries(_text(by_id, ids), items)
                        facts.append(
                            {
                                "chat": chat.number,
                                "ability": ability,
                                "budget": b,
                                "question": question,
                                "cited": cited,
                                "words": words[b].carried(ability, block, items, reach is True),
                                "evidence_words": reach,
                                "missing": [
                                    [k for k in answer_words.key_words(i) if k not in block]
                                    for i in items
                                ],
                            }
                        )
    return {
        str(b): tallies[b].rates()
        | {"tokens_used_mean": round(statistics.mean(used[b]), 1), "words": words[b].rates()}
        for b in budgets
    } | {"facts": facts}


def latency(address: str, chat: Chat, token: str, budget: int = 8000) -> dict[str, float]:
    """AssemblePrompt at `budget` over one chat's questions (each asked three times)."""

    with connect(address, token) as client:
        calls = [
            (
                lambda q=q: client.AssemblePrompt(
                    retrieval_pb2.AssemblePromptRequest(query=q, token_budget=budget), timeout=60
                )
            )
            for _, q, _, _ in chat.questions
        ] * 3
        return timed(calls, warmup=10)


def run(
    numbers: Sequence[int] = tuple(range(1, 11)),
    budgets: Sequence[int] = BUDGETS,
    hybrid_on: bool = True,
    postgres: bool = False,
    limits: tuple[int, int] = (INSERT_MESSAGES, INSERT_CHARS),
) -> dict[str, Any]:

    chats = load(numbers)
    out: dict[str, Any] = {
        "chats": list(numbers),
        "questions": sum(len(c.questions) for c in chats),
        "references": references(chats, budgets),
    }
    modes = {"lexical": LEXICAL_ENV}
    if hybrid_on and not postgres:
        modes["hybrid"] = hybrid.hybrid_env()
    with tempfile.TemporaryDirectory(prefix="agentmem-beam-") as tmp_name:
        tmp = Path(tmp_name)
        out["echo_floor"] = echo_floor(tmp, n=500)
        for label, env in modes.items():
            print(f"-- BEAM-dev evidence in the prompt, {label}", flush=True)
            tokens = [f"beam-{label}-{c.number}" for c in chats]
            keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
            with (
                servers.database(tmp, f"beam-{label}", postgres) as url,
                servers.agentmem(tmp, keys, extra_env=env, storage_url=url) as address,
            ):
                loaded = []
                started = time.perf_counter()
                for chat, token in zip(chats, tokens, strict=True):
                    with connect(address, token) as client:
                        loaded.append((chat, token, insert(client, chat, *limits)))
                        if label == "hybrid":
                            hybrid.wait_embedded(client)
                out[f"{label}_load_s"] = round(time.perf_counter() - started, 1)
                out[label] = measure(address, loaded, budgets)
                out[label]["latency_8000"] = latency(address, chats[0], tokens[0])
                # Last: the appends grow the chat's last conversation.
                out[label]["append"] = append_latency.on_chat(
                    address, tokens[0], loaded[0][2], chats[0]
                )
            print("   " + "; ".join(_cells(out, label, budgets)), flush=True)
    return out


def _cells(out: dict[str, Any], label: str, budgets: Sequence[int]) -> list[str]:
    return [f"{b}: {out[label][str(b)]['overall']:.3f}" for b in budgets]


def table_lines(report: dict[str, Any]) -> list[str]:
    beam = report.get("beam")
    if not beam:
        return []
    budgets = [int(b) for b in beam["references"]["naive BM25"]]
    rows = [(f"AssemblePrompt, {m}", beam[m]) for m in ("lexical", "hybrid") if m in beam]
    rows += [(k, v) for k, v in beam["references"].items() if k != "words"]
    lines = [
        "",
        f"evidence in the prompt, BEAM-dev (chats {', '.join(map(str, beam['chats']))}; "
        f"{beam['questions']} questions; a question counts when every source message is in a "
        "cited passage):",
        "| assembly | " + " | ".join(f"{b:,}" for b in budgets) + " |",
        "|---|" + "---|" * len(budgets),
    ]
    for label, r in rows:
        lines.append(
            f"| {label} | " + " | ".join(f"{r[str(b)]['overall']:.3f}" for b in budgets) + " |"
        )
    best = beam.get("hybrid") or beam.get("lexical")
    if best:
        b = str(budgets[len(budgets) // 2] if len(budgets) > 1 else budgets[0])
        lines += [
            "",
            f"by ability at {int(b):,} tokens:",
            "| ability | " + " | ".join(label for label, _ in rows) + " |",
            "|---|" + "---|" * len(rows),
        ]
        for a in ABILITIES:
            lines.append(f"| {a} | " + " | ".join(f"{r[b].get(a, 0):.3f}" for _, r in rows) + " |")
    lines += words_lines(beam, budgets)
    echo = beam["echo_floor"]["p50_ms"]
    for m in ("lexical", "hybrid"):
        if m in beam:
            lat = beam[m]["latency_8000"]
            lines.append(
                f"AssemblePrompt at 8,000 tokens, {m}, chat {beam['chats'][0]}: "
                f"p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms (two-hop echo p50 {echo} ms)"
            )
            if "append" in beam[m]:
                held = beam[m]["append"]["session_messages"]
                lines.append(append_latency.line(beam[m]["append"], echo, m, held))
    return lines


def words_lines(beam: dict[str, Any], budgets: Sequence[int]) -> list[str]:
    """The answer's words in the block, by fact ability, at every budget."""
    rows = [(f"AssemblePrompt, {m}", beam[m], "words") for m in ("lexical", "hybrid") if m in beam]
    rows += [(k, v, "") for k, v in beam["references"]["words"].items()]

    def of(r: dict[str, Any], b: int, kind: str) -> dict[str, Any]:
        out: dict[str, Any] = r[str(b)][kind] if kind else r[str(b)]
        return out

    first = of(rows[0][1], budgets[0], rows[0][2])
    lines = [
        "",
        f"the answer's words in the block, BEAM-dev fact questions ({first['questions']} with "
        f"key words, {first['skipped']} without; a question counts when the block text carries "
        "the key words of every rubric item, `bench.answer_words`):",
        "| ability | budget | " + " | ".join(label for label, _, _ in rows) + " |",
        "|---|---|" + "---|" * len(rows),
    ]
    for b in budgets:
        for a in ("overall", *FACT_ABILITIES):
            lines.append(
                f"| {a} | {b:,} | "
                + " | ".join(f"{of(r, b, kind).get(a, 0):.3f}" for _, r, kind in rows)
                + " |"
            )
        n = of(rows[0][1], b, rows[0][2])["reachable"]["questions"]
        lines.append(
            f"| overall, the {n} whose source messages carry the words | {b:,} | "
            + " | ".join(f"{of(r, b, kind)['reachable']['overall']:.3f}" for _, r, kind in rows)
            + " |"
        )
    return lines


def misses_lines(facts: list[dict[str, Any]]) -> list[str]:
    """Fact questions by whether the evidence is cited and whether the words are in the block."""
    out = []
    for b in sorted({f["budget"] for f in facts}):
        at = [f for f in facts if f["budget"] == b and f["words"] is not None]
        cells = Counter((f["cited"], f["words"]) for f in at)
        unreachable = sum(1 for f in at if not f["evidence_words"])
        out.append(
            f"fact questions at {b:,} tokens: cited and words {cells[(True, True)]}, cited "
            f"without the words {cells[(True, False)]}, words without every source cited "
            f"{cells[(False, True)]}, neither {cells[(False, False)]}; the source messages "
            f"themselves lack the words for {unreachable}"
        )
    return out


def targets(report: dict[str, Any], out: list[str]) -> None:
    beam = report.get("beam")
    if not beam:
        return
    mode = "hybrid" if "hybrid" in beam else "lexical"
    best = beam[mode]

    def check(label: str, ok: bool, figure: str) -> None:
        out.append(f"  {'ok  ' if ok else 'MISS'} {label}: {figure}")

    for b, floor in (("2000", TARGET_2000), ("4000", TARGET_4000)):
        if b in best:
            v = best[b]["overall"]
            check(f"BEAM-dev evidence at {b} tokens ({mode})", v >= floor, f"{v} (floor {floor})")
    if "2000" in best and "words" in best["2000"]:
        v = best["2000"]["words"]["overall"]
        check(
            f"BEAM-dev fact questions' answer words in 2000 tokens ({mode})",
            v >= TARGET_WORDS_2000,
            f"{v} (floor {TARGET_WORDS_2000})",
        )
    for b, r in beam["references"]["naive BM25"].items():
        if b in best:
            gap = round(best[b]["overall"] - r["overall"], 3)
            check(
                f"BEAM-dev above naive BM25 at {b} tokens ({mode})",
                gap >= TARGET_ABOVE_NAIVE,
                f"+{gap} (floor +{TARGET_ABOVE_NAIVE})",
            )
    p50 = best["latency_8000"]["p50_ms"]
    check("AssemblePrompt p50 at 8,000 tokens", p50 <= TARGET_P50_MS, f"{p50} ms")
    if "append" in best:
        ok, figure = append_latency.check(best["append"], beam["echo_floor"]["p50_ms"])
        check(f"AppendMessages of one turn p50 <= 3x echo ({mode})", ok, figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", default="", help="comma-separated chat numbers (1-10)")
    parser.add_argument("--budgets", default="", help="comma-separated token budgets")
    parser.add_argument("--no-hybrid", action="store_true")
    parser.add_argument("--fast", action="store_true", help="chats 1-2, lexical, 2,000 tokens")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--out", default="", help="write the whole report as JSON here")
    parser.add_argument(
        "--limits",
        default=f"{INSERT_MESSAGES},{INSERT_CHARS}",
        help="messages,characters one insert may hold (a longer message is cut)",
    )
    args = parser.parse_args()
    numbers = [int(x) for x in args.chats.split(",") if x] or (
        [1, 2] if args.fast else list(range(1, 11))
    )
    budgets = [int(x) for x in args.budgets.split(",") if x] or (
        [2000] if args.fast else list(BUDGETS)
    )
    hybrid_on = not (args.no_hybrid or args.fast)
    messages, chars = (int(x) for x in args.limits.split(","))
    report = {"beam": run(numbers, budgets, hybrid_on, args.postgres, (messages, chars))}
    print("\n".join(table_lines(report)))
    for m in ("lexical", "hybrid"):
        if m in report["beam"]:
            print(f"{m}:", *misses_lines(report["beam"][m]["facts"]), sep="\n  ")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    lines: list[str] = []
    targets(report, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
