"""`make bench`, passages: search latency on corpora counted in passages, and conversation
inserts through the API.

A corpus of conversations (10 messages each, two named speakers, a date) holds as many
passages as the lexical corpora hold memories: 20k passages of everyday words and 100k
passages, one tenant each. The conversations are inserted through the runtime's own insert
use case (`corpus.load_conversations`), so the database holds exactly what `InsertMemory`
writes. SearchMemories is timed with `group_by_source` true (one hit per conversation) and
false (the top passages), and AssemblePrompt, next to the two-hop echo floor and the
backend's naive full-text query over the same passage texts.
"""

from __future__ import annotations

import re
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy import create_engine, text

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2, sources_pb2
from bench import corpus, hybrid, locomo, servers
from bench.common import echo_floor, echo_here, echo_here_lines, timed
from runtime_svc.domain import passages
from runtime_svc.domain.sources import Body, SourceKind


@dataclass(frozen=True)
class Plan:
    name: str
    passages: int
    everyday: bool = False
    floor_questions: int = 200


PLANS = [Plan("20k-everyday-passages", 20_000, everyday=True), Plan("100k-passages", 100_000)]


def passage_texts(url: str) -> list[str]:
    """Every passage text of the stored conversations, as the index derives them (default
    window)."""
    engine = create_engine(url)
    with engine.connect() as conn:
        raws = conn.execute(text("SELECT raw FROM sources WHERE kind = 'conversation'")).scalars()
        out = [
            p.text
            for raw in raws
            for p in passages.derive(
                Body.from_raw(SourceKind.CONVERSATION, raw).messages, passages.Window()
            )
        ]
    engine.dispose()
    return out


def naive_floor(url: str, tmp: Path, questions: list[str]) -> dict[str, float]:
    """The backend's naive full-text query over the passage texts: the question's words
    OR-ed, ranked, LIMIT 10, no filter (as `bench.retrieval.naive_floor` over memories)."""

    texts = passage_texts(url)
    words = [re.findall(r"\w+", q.lower()) for q in questions]
    if url.startswith("sqlite"):
        path = tmp / "naive-passages.db"
        db = sqlite3.connect(path)
        db.execute(
            "CREATE VIRTUAL TABLE naive USING fts5(body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        db.executemany("INSERT INTO naive(body) VALUES (?)", ((t,) for t in texts))
        db.execute("INSERT INTO naive(naive) VALUES ('optimize')")
        db.commit()
        sql = "SELECT rowid FROM naive WHERE naive MATCH ? ORDER BY bm25(naive) LIMIT 10"
        matches = [" OR ".join(f'"{w}"' for w in ws) for ws in words]
        try:
            return timed(
                [lambda m=m: db.execute(sql, (m,)).fetchall() for m in matches],
                warmup=min(5, len(matches)),
            )
        finally:
            db.close()
            path.unlink()
    engine = create_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE TABLE naive_passages (body text)")
        conn.execute(text("INSERT INTO naive_passages VALUES (:b)"), [{"b": t} for t in texts])
        conn.exec_driver_sql(
            "CREATE TABLE naive AS SELECT row_number() OVER () AS pk, "
            "to_tsvector('english', body) AS tsv FROM naive_passages"
        )
        conn.exec_driver_sql("CREATE INDEX naive_tsv ON naive USING gin (tsv)")
        conn.exec_driver_sql("ANALYZE naive")
        conn.commit()
        sql = text(
            "SELECT pk FROM naive, to_tsquery('english', :q) AS q WHERE tsv @@ q "
            "ORDER BY ts_rank(tsv, q) DESC LIMIT 10"
        )
        queries = [" | ".join(ws) for ws in words]
        try:
            return timed(
                [lambda q=q: conn.execute(sql, {"q": q}).fetchall() for q in queries],
                warmup=min(5, len(queries)),
            )
        finally:
            conn.rollback()
            conn.exec_driver_sql("DROP TABLE naive")
            conn.exec_driver_sql("DROP TABLE naive_passages")
            conn.commit()
            engine.dispose()


def passage_rpcs(address: str, token: str, questions: list[str]) -> dict[str, dict]:

    out = {}
    with connect(address, token) as client:
        for name, make in (
            (
                "SearchMemories, grouped",
                lambda q: client.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(query=q, limit=10, group_by_source=True),
                    timeout=30,
                ),
            ),
            (
                "SearchMemories, passages",
                lambda q: client.SearchMemories(
                    retrieval_pb2.SearchMemoriesRequest(query=q, limit=10, group_by_source=False),
                    timeout=30,
                ),
            ),
            (
                "AssemblePrompt",
                lambda q: client.AssemblePrompt(
                    retrieval_pb2.AssemblePromptRequest(
                        query=q, thread_id="bench", token_budget=400
                    ),
                    timeout=30,
                ),
            ),
        ):
            calls = [lambda q=q, make=make: make(q) for q in questions]
            out[name] = timed(calls, warmup=min(20, len(calls)))
    return out


def latency(tmp: Path, n_questions: int, postgres: bool, plans: list[Plan] = PLANS) -> list[dict]:

    rows = []
    for plan in plans:
        print(
            f"-- {plan.name}: inserting conversations holding {plan.passages:,} passages "
            f"(one tenant{', everyday words' if plan.everyday else ''})",
            flush=True,
        )
        tenant = "bench-passages"
        with servers.database(tmp, plan.name, postgres) as url:
            started = time.perf_counter()
            conversations = corpus.load_conversations(
                url, [tenant], plan.passages, everyday=plan.everyday
            )
            load_s = time.perf_counter() - started
            lang = corpus.Language(seed=99, everyday=plan.everyday)
            questions = [lang.question() for _ in range(n_questions)]
            floor = naive_floor(url, tmp, questions[: plan.floor_questions])
            # Just before these calls, as `bench.retrieval.scenario` does (the machine drifts).
            echo_now = echo_floor(tmp) if plan.everyday else None
            keys = [servers.key("tok-passages", tenant, servers.ALL_SCOPES)]
            with servers.agentmem(tmp, keys, storage_url=url) as address:
                result = passage_rpcs(address, "tok-passages", questions)
        rows.append(
            {
                "scenario": plan.name,
                "passages": plan.passages,
                "conversations": conversations,
                "everyday": plan.everyday,
                "load_s": round(load_s, 1),
                "naive_fts_floor": floor,
                **({"echo_floor_here": echo_now} if echo_now is not None else {}),
                **result,
            }
        )
        print(
            f"   loaded in {load_s:.0f} s; naive p50 {floor['p50_ms']} ms, "
            + (f"echo just before p50 {echo_now['p50_ms']} ms, " if echo_now is not None else "")
            + ", ".join(f"{k} p50 {v['p50_ms']} ms" for k, v in result.items()),
            flush=True,
        )
    return rows


def insert_throughput(
    tmp: Path, postgres: bool, n: int = 400, in_flight: int = 16
) -> dict[str, float]:
    """Conversations (10 messages, names and a date) inserted through the API with
    `in_flight` calls in flight: conversations/s and messages/s."""
    lang = corpus.Language(seed=5)
    convs = [
        [
            sources_pb2.Message(
                role=m.role,
                content=m.content,
                name=m.name,
                sent_at=Timestamp(seconds=m.sent_at_us // 1_000_000),
            )
            for m in messages
        ]
        for messages in corpus.conversations(lang, n * corpus.MESSAGES_PER_CONVERSATION)
    ]
    keys = [servers.key("tok-conv", "conv", servers.ALL_SCOPES)]
    with (
        servers.database(tmp, "conversation-inserts", postgres) as url,
        servers.agentmem(tmp, keys, storage_url=url) as address,
        connect(address, "tok-conv") as client,
    ):

        def insert(messages: list[sources_pb2.Message]) -> None:
            client.InsertMemory(sources_pb2.InsertMemoryRequest(messages=messages), timeout=60)

        warm = convs[: in_flight * 2]
        with ThreadPoolExecutor(in_flight) as pool:
            list(pool.map(insert, warm))
            t = time.perf_counter()
            list(pool.map(insert, convs[len(warm) :]))
            spent = time.perf_counter() - t
    timed_convs = convs[len(warm) :]
    messages = sum(len(c) for c in timed_convs)
    out = {
        "in_flight": in_flight,
        "conversations": len(timed_convs),
        "messages_per_conversation": corpus.MESSAGES_PER_CONVERSATION,
        "conversations_per_s": round(len(timed_convs) / spent, 1),
        "messages_per_s": round(messages / spent),
    }
    print(
        f"   {out['conversations_per_s']} conversations/s, {out['messages_per_s']} messages/s "
        f"({in_flight} in flight)",
        flush=True,
    )
    return out


def locomo_recall(postgres: bool, hybrid_on: bool) -> dict[str, dict]:
    """LoCoMo-dev as conversations only (the `locomo-passages` part): lexical, and with
    hybrid retrieval on (SQLite)."""
    import tempfile

    convs = locomo.conversations()
    tokens = [f"locomo-passages-{i}" for i in range(len(convs))]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    with (
        tempfile.TemporaryDirectory() as tmp,
        servers.database(Path(tmp), "locomo-passages", postgres) as url,
        servers.agentmem(Path(tmp), keys, storage_url=url) as address,
    ):
        out = {"agentmem, passages": locomo.passage_recall(address, convs, tokens)}
    if hybrid_on and not postgres:
        out |= {k: v for k, v in hybrid.locomo_recall().items() if k == "hybrid, passages"}
    return out


LATENCY = ("SearchMemories, grouped", "SearchMemories, passages", "AssemblePrompt")


def table_lines(report: dict) -> list[str]:
    lines = []
    rows = report.get("passages")
    if rows:
        lines += [
            "",
            "| passages | naive full-text p50 / p99 | Search grouped p50 / p99 "
            "| Search passages p50 / p99 | Assemble p50 / p99 |",
            "|---|---|---|---|---|",
        ]
        for r in rows:
            cells = [r["naive_fts_floor"], *(r[k] for k in LATENCY)]
            lines.append(
                f"| {r['scenario']} ({r['conversations']:,} conversations) | "
                + " | ".join(f"{c['p50_ms']} / {c['p99_ms']}" for c in cells)
                + " |"
            )

        lines += echo_here_lines(rows)
    w = report.get("conversation_writes")
    if w:
        lines.append(
            f"conversation inserts ({w['messages_per_conversation']} messages each, "
            f"{w['in_flight']} in flight): {w['conversations_per_s']} conversations/s, "
            f"{w['messages_per_s']} messages/s"
        )
    hybrid_passages = report.get("locomo", {}).get("hybrid, passages")
    if hybrid_passages:
        lines.append(
            "LoCoMo-dev hybrid, passages: "
            f"{hybrid_passages['whole_source_hits']:.1%} of the hits were whole conversations "
            "(no passage: they cover no turn)"
        )
    return lines


def targets(report: dict, check, out: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Passage search against the lexical corpora's targets (the same size counted in
    passages), and LoCoMo-dev passage recall."""

    echo = report["echo_floor"]["p50_ms"]
    by = {r["scenario"]: r for r in report.get("passages", [])}
    for mode in LATENCY[:2]:
        r = by.get("20k-everyday-passages")
        if r:
            here = echo_here(report, r)
            label = f"20k everyday passages: {mode}"
            check(f"{label} p50 <= 3 x echo", r[mode]["p50_ms"], 3 * here)
            check(f"{label} p99 <= 6 x echo", r[mode]["p99_ms"], 6 * here)
        r = by.get("100k-passages")
        if r:
            check(
                f"100k passages: {mode} p50 <= echo + naive p50",
                r[mode]["p50_ms"],
                echo + r["naive_fts_floor"]["p50_ms"],
            )
    loco = report.get("locomo", {})
    for name, floor in (
        ("agentmem, passages", locomo.PASSAGE_TARGET),
        ("hybrid, passages", hybrid.PASSAGE_TARGET),
    ):
        if name in loco:
            value = loco[name]["recall@5"]
            out.append(
                f"  {'ok  ' if value >= floor else 'MISS'} LoCoMo-dev passage recall@5 "
                f"({name.split(',')[0].replace('agentmem', 'lexical')}): {value} (floor {floor})"
            )
    if "agentmem, passages" in loco and "hybrid, passages" in loco:
        hybrid_value = loco["hybrid, passages"]["recall@5"]
        lexical_value = loco["agentmem, passages"]["recall@5"]
        out.append(
            f"  {'ok  ' if hybrid_value >= lexical_value else 'MISS'} LoCoMo-dev passage "
            f"recall@5: hybrid not below lexical: {hybrid_value} (lexical {lexical_value})"
        )
