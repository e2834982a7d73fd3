"""The instruction-like detector (`runtime_svc.domain.instruction_like`), measured: precision
and recall on the labelled set (`tests/data/instruction_like.jsonl`: attacks, and hard
negatives such as preferences addressed to the assistant), and its false-positive rate on
ordinary conversations, where every message is a negative: the LoCoMo and BEAM development
halves (the shared data folder beside the checkout, see `bench.locomo`), per message and
per conversation source (a LoCoMo session, a BEAM batch: what one insert holds).

    python -m bench.instruction_like
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from bench.locomo import DATA as LOCOMO
from runtime_svc.domain.insert_policy import steering
from runtime_svc.domain.instruction_like import signals
from runtime_svc.domain.sources import Body, Message

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "instruction_like.jsonl"
HELD_OUT = ROOT / "tests" / "data" / "instruction_like_held_out.jsonl"
BEAM = LOCOMO.parent / "beam-dev"


def labelled(path: Path = LABELLED) -> list[tuple[str, bool]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(r["text"], bool(r["instruction_like"])) for r in rows]


def locomo_sources() -> Iterator[list[str]]:
    """Each LoCoMo-dev session's messages."""
    for path in sorted(LOCOMO.glob("*.json")):
        conv = json.loads(path.read_text())
        conv = conv.get("conversation", conv)
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                yield [t.get("text", "") for t in turns]


def beam_sources() -> Iterator[list[str]]:
    """Each BEAM-dev batch's messages."""
    for path in sorted(BEAM.glob("*/chat.json")):
        for batch in json.loads(path.read_text()):
            yield [m["content"] for turn in batch["turns"] for m in turn]


def _held(source: list[str]) -> bool:
    """Whether the service holds this conversation (`insert_policy.steering`: every
    message, and each two adjacent ones as the block shows them)."""
    return steering(Body(messages=tuple(Message("user", m) for m in source)))


def false_positives(sources: list[list[str]]) -> dict[str, object]:
    messages = [m for s in sources for m in s]
    flagged = [m for m in messages if signals(m)]
    held = sum(1 for s in sources if _held(s))
    return {
        "messages": len(messages),
        "flagged_messages": len(flagged),
        "fpr_messages": round(len(flagged) / max(1, len(messages)), 4),
        "sources": len(sources),
        "held_sources": held,
        "fpr_sources": round(held / max(1, len(sources)), 4),
        "flagged_by": sorted({n for m in flagged for n in signals(m)}),
    }


def scored(rows: list[tuple[str, bool]]) -> dict[str, object]:
    tp = sum(1 for t, y in rows if y and signals(t))
    fp = sum(1 for t, y in rows if not y and signals(t))
    fn = sum(1 for t, y in rows if y and not signals(t))
    negatives = sum(1 for _, y in rows if not y)
    return {
        "examples": len(rows),
        "precision": round(tp / max(1, tp + fp), 3),
        "recall": round(tp / max(1, tp + fn), 3),
        "fpr": round(fp / max(1, negatives), 3),
    }


def run() -> dict[str, object]:
    return {
        "labelled": scored(labelled()),
        # Written apart from the patterns and never used to change them: the figure to quote.
        "held_out": scored(labelled(HELD_OUT)),
        "locomo_dev": false_positives(list(locomo_sources())),
        "beam_dev": false_positives(list(beam_sources())),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
