"""BEAM-dev questions the prompt block misses, and why: for each question not covered at a
budget, its source messages not cited, where each first appears in SearchMemories' ranked
passages (`group_by_source: false`, top 100), and so whether the budget cut it (ranked but
not cited) or the ranking never surfaced it.

The chats are loaded once into a database kept in `--dir` (lexical and hybrid apart), so
later runs of a changed assembly start the service on the same data:

    python -m bench.beam_misses --dir /tmp/beam-lab --chats 1,2 --budgets 4000
    python -m bench.beam_misses --dir /tmp/beam-lab --hybrid --quiet     # figures only
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentmem.client import connect
from agentmem.v1 import retrieval_pb2
from bench import beam, hybrid, servers


def _loaded(address: str, tokens: list[str], chats: list[beam.Chat], path: Path) -> list[Any]:
    """Each chat's (chat, token, id_of), inserting those not yet in the database."""
    saved: dict[str, list[list[Any]]] = json.loads(path.read_text()) if path.exists() else {}
    out = []
    for chat, token in zip(chats, tokens, strict=True):
        if token not in saved:
            with connect(address, token) as client:
                id_of = beam.insert(client, chat, beam.INSERT_MESSAGES, beam.INSERT_CHARS)
                hybrid.wait_embedded(client) if "hybrid" in token else None
            saved[token] = [[s, i, m] for (s, i), m in id_of.items()]
            path.write_text(json.dumps(saved))
        out.append((chat, token, {(s, i): m for s, i, m in saved[token]}))
    return out


def _ranks(client: Any, question: str, id_of: dict[tuple[str, int], int]) -> dict[int, int]:
    """Each message id's first rank among the top 100 passages."""
    r = client.SearchMemories(
        retrieval_pb2.SearchMemoriesRequest(query=question, limit=100, group_by_source=False)
    )
    out: dict[int, int] = {}
    for rank, h in enumerate(r.hits, start=1):
        for i in range(h.passage.message_start, h.passage.message_end + 1):
            m = id_of.get((h.source_id, i))
            if m is not None:
                out.setdefault(m, rank)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--chats", default="1,2,3,4,5,6,7,8,9,10")
    p.add_argument("--budgets", default="4000")
    p.add_argument("--hybrid", action="store_true")
    p.add_argument("--quiet", action="store_true", help="figures only")
    p.add_argument("--ability", default="", help="misses of this ability only")
    args = p.parse_args()
    chats = beam.load([int(x) for x in args.chats.split(",")])
    budgets = [int(x) for x in args.budgets.split(",")]
    label = "hybrid" if args.hybrid else "lexical"
    env = hybrid.hybrid_env() if args.hybrid else beam.LEXICAL_ENV
    tmp = Path(args.dir)
    tmp.mkdir(parents=True, exist_ok=True)
    tokens = [f"beam-{label}-{c.number}" for c in chats]
    keys = [servers.key(t, t, servers.ALL_SCOPES) for t in tokens]
    with (
        servers.database(tmp, f"beam-{label}") as url,
        servers.agentmem(tmp, keys, extra_env=env, storage_url=url) as address,
    ):
        loaded = _loaded(address, tokens, chats, tmp / f"{label}-ids.json")
        tallies = {b: beam.Tally() for b in budgets}
        for chat, token, id_of in loaded:
            messages = chat.messages()
            with connect(address, token) as client:
                for ability, question, ids, _ in chat.questions:
                    for b in budgets:
                        r = client.AssemblePrompt(
                            retrieval_pb2.AssemblePromptRequest(query=question, token_budget=b)
                        )
                        got = beam.covered(r.citations, id_of)
                        tallies[b].add(ability, ids <= got)
                        if ids <= got or args.quiet or (args.ability and ability != args.ability):
                            continue
                        ranks = _ranks(client, question, id_of)
                        missing = ", ".join(
                            f"{m}({messages[m]['role'][0]},{len(messages[m]['content'])}c,"
                            f"r{ranks.get(m, '-')})"
                            for m in sorted(ids - got)
                        )
                        print(f"[{chat.number} {ability} @{b}] {question[:150]!r}")
                        print(f"    need {len(ids)}, missing {missing}")
        for b in budgets:
            print(label, b, json.dumps(tallies[b].rates()))


if __name__ == "__main__":
    main()
