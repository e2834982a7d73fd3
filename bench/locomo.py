"""LoCoMo-dev retrieval recall through both services, next to naive FTS5 on the same data.

Each conversation is one user's memory (its own tenant); every turn is one memory with its
dia_id as a label, stored two ways: "Speaker: text", and with the session's date in front
("1:56 pm on 8 May, 2023 Caroline: ..."), as a chat host that keeps when things were said
would. A question counts as found at k when all its
evidence turns are among the top k. Category 5 (adversarial) questions are skipped.

As conversations (passages): every session is one conversation source (messages with the
speakers' names and the session's date as `sent_at`), questions are asked with
`group_by_source: false`, and a question counts as found at k when every evidence turn lies
within the message range of one of the top k passages. A hit without a passage (a whole
conversation, as the semantic side of hybrid retrieval ranks them today) covers no turn;
`whole_source_hits` says what share of the hits were such.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from google.protobuf.timestamp_pb2 import Timestamp  # noqa: E402

from agentmem.client import connect  # noqa: E402
from agentmem.v1 import retrieval_pb2, sources_pb2  # noqa: E402
from bench import servers  # noqa: E402

# shared/ sits beside the checkout (or beside the worktrees' folder)
DATA = (
    next(
        (
            d
            for d in (ROOT.parent / "shared", ROOT.parent.parent / "shared")
            if (d / "data" / "locomo-dev").is_dir()
        ),
        ROOT.parent / "shared",
    )
    / "data"
    / "locomo-dev"
)


def conversations(data_dir: Path = DATA) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(data_dir.glob("*.json"))]


def turns(conv: dict, dated: bool = False) -> list[tuple[str, str]]:
    """(dia_id, memory text) for every turn."""
    out = []
    for key, value in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list):
            date = f"{conv.get(key + '_date_time', '')} " if dated else ""
            out += [(t["dia_id"], f"{date}{t['speaker']}: {t['text']}") for t in value]
    return out


def questions(conv: dict) -> list[dict]:
    return [q for q in conv["qa"] if q.get("category") != 5 and q.get("evidence")]


def found(ranked: list[str], evidence: list[str], k: int) -> bool:
    return set(evidence) <= set(ranked[:k])


def naive_fts(convs: list[dict]) -> dict[str, float]:
    """Question words OR-ed, bm25, LIMIT 10, default tokenizer, no filter."""
    hits = {5: 0, 10: 0}
    total = 0
    for conv in convs:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(dia, body)")
        db.executemany("INSERT INTO t VALUES (?, ?)", turns(conv))
        for q in questions(conv):
            words = re.findall(r"\w+", q["question"].lower())
            match = " OR ".join(f'"{w}"' for w in words)
            ranked = [
                r[0]
                for r in db.execute(
                    "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,)
                )
            ]
            total += 1
            for k in hits:
                hits[k] += found(ranked, q["evidence"], k)
    return {f"recall@{k}": round(v / total, 3) for k, v in hits.items()} | {"questions": total}


def agentmem_recall(
    address: str,
    convs: list[dict],
    tokens: list[str],
    dated: bool,
    before_questions: Callable[[object], object] | None = None,
) -> dict[str, float]:
    """`before_questions(client)` runs once a conversation is stored (hybrid retrieval waits
    there until it is embedded)."""
    hits = {5: 0, 10: 0}
    total = 0
    for conv, token in zip(convs, tokens, strict=True):
        with connect(address, token) as client:
            by_source = {}
            for dia, text in turns(conv, dated):
                r = client.InsertMemory(
                    sources_pb2.InsertMemoryRequest(
                        content=text, metadata=sources_pb2.InsertMetadata(labels={"dia_id": dia})
                    )
                )
                by_source[r.source_id] = dia
            if before_questions is not None:
                before_questions(client)
            for q in questions(conv):
                res = client.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(query=q["question"], limit=10)
                )
                ranked = [by_source[h.source_id] for h in res.hits]
                total += 1
                for k in hits:
                    hits[k] += found(ranked, q["evidence"], k)
    return {f"recall@{k}": round(v / total, 3) for k, v in hits.items()} | {"questions": total}


def sessions(conv: dict) -> list[tuple[Timestamp | None, list[dict]]]:
    """(the session's date, its turns) for every session."""
    out = []
    for key, value in conv.items():
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list) and value:
            when = None
            raw = conv.get(key + "_date_time", "")
            try:
                at = datetime.strptime(raw, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
                when = Timestamp(seconds=int(at.timestamp()))
            except ValueError:
                pass
            out.append((when, value))
    return out


def content(turn: dict, photos: bool = False) -> str:
    """A turn's text; with `photos`, a photo the speaker shared follows it as LoCoMo's own
    evaluation renders it ("[shares a photo of …]", its caption)."""
    if photos and turn.get("blip_caption"):
        return f"{turn['text']} [shares {turn['blip_caption']}]"
    return turn["text"]


def insert_sessions(client: Any, conv: dict, photos: bool = False) -> dict[tuple[str, int], str]:
    """Every session of a conversation inserted as one conversation source (messages with the
    speakers' names, the session's date as `sent_at`; `photos`: see `content`); the dia_id of
    each (source, message index)."""
    dia_of: dict[tuple[str, int], str] = {}
    for when, turns_ in sessions(conv):
        r = client.InsertMemory(
            sources_pb2.InsertMemoryRequest(
                messages=[
                    sources_pb2.Message(
                        role="user" if t["speaker"] == conv["speaker_a"] else "assistant",
                        content=content(t, photos),
                        name=t["speaker"],
                        sent_at=when,
                    )
                    for t in turns_
                ]
            )
        )
        for i, t in enumerate(turns_):
            dia_of[(r.source_id, i)] = t["dia_id"]
    return dia_of


def passage_recall(
    address: str,
    convs: list[dict],
    tokens: list[str],
    before_questions: Callable[[object], object] | None = None,
) -> dict[str, float]:
    """Sessions inserted as conversations, questions over passages (see the module doc).
    `before_questions(client)` as in `agentmem_recall`."""
    hits = {5: 0, 10: 0}
    total = returned = whole = 0
    messages = sum(len(t) for conv in convs for _, t in sessions(conv))
    spent = 0.0
    for conv, token in zip(convs, tokens, strict=True):
        with connect(address, token) as client:
            started = time.perf_counter()
            dia_of = insert_sessions(client, conv)
            spent += time.perf_counter() - started
            if before_questions is not None:
                before_questions(client)
            for q in questions(conv):
                res = client.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(
                        query=q["question"], limit=10, group_by_source=False
                    )
                )
                covered: list[set[str]] = []
                for h in res.hits:
                    returned += 1
                    if not h.HasField("passage"):  # a whole conversation, not a passage:
                        whole += 1  # it covers no evidence turn
                        covered.append(set())
                        continue
                    span = range(h.passage.message_start, h.passage.message_end + 1)
                    covered.append({dia_of[(h.source_id, i)] for i in span})
                total += 1
                for k in hits:
                    hits[k] += set(q["evidence"]) <= set().union(*covered[:k])
    return {f"recall@{k}": round(v / total, 3) for k, v in hits.items()} | {
        "questions": total,
        "messages_per_s": round(messages / spent, 1) if spent else 0.0,
        "whole_source_hits": round(whole / returned, 3) if returned else 0.0,
    }


def run(postgres: bool = False) -> dict[str, dict]:
    convs = conversations()
    out = {}
    for dated in (False, True):
        tokens = [f"locomo-{dated}-{i}" for i in range(len(convs))]
        keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
        with (
            tempfile.TemporaryDirectory() as tmp,
            servers.database(Path(tmp), f"locomo-{dated}", postgres) as url,
            servers.agentmem(Path(tmp), keys, storage_url=url) as address,
        ):
            label = "agentmem, dated turns" if dated else "agentmem"
            out[label] = agentmem_recall(address, convs, tokens, dated)
    tokens = [f"locomo-passages-{i}" for i in range(len(convs))]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    with (
        tempfile.TemporaryDirectory() as tmp,
        servers.database(Path(tmp), "locomo-passages", postgres) as url,
        servers.agentmem(Path(tmp), keys, storage_url=url) as address,
    ):
        out["agentmem, passages"] = passage_recall(address, convs, tokens)
    out["naive FTS5 (floor)"] = naive_fts(convs)
    return out


PASSAGE_TARGET = 0.56  # lexical passage recall@5


if __name__ == "__main__":
    results = run()
    for name, r in results.items():
        print(
            f"{name:<28} recall@5 {r['recall@5']:.3f}  recall@10 {r['recall@10']:.3f}  "
            f"({r['questions']} questions)"
        )
    passages = results["agentmem, passages"]
    print(
        f"passages: {passages['messages_per_s']} messages/s inserted as conversations; "
        f"recall@5 {'meets' if passages['recall@5'] >= PASSAGE_TARGET else 'MISSES'} "
        f"the target {PASSAGE_TARGET}"
    )
