"""BPE token counts for the benchmarks, offline: OpenAI's o200k_base (GPT-4o and later) or
cl100k_base (GPT-4), as the service counts prompt budgets (`runtime_svc.adapters.tokenizers`:
`tiktoken` given the ranks file `bpe-openai` ships, checked against the SHA-256 `tiktoken`
expects). Neither installed: `available()` is false and the benchmarks print no BPE column.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from runtime_svc.adapters import tokenizers

ENCODINGS = (tokenizers.O200K, tokenizers.CL100K)


@cache
def encoding() -> Any | None:
    """The first of `ENCODINGS` that can be had offline, as a `tiktoken.Encoding`."""
    for name in ENCODINGS:
        enc = tokenizers.encoding(name)
        if enc is not None:
            return enc
    return None


def available() -> bool:
    return encoding() is not None


def name() -> str:
    enc = encoding()
    return enc.name if enc is not None else ""


def count(text: str) -> int:
    enc = encoding()
    assert enc is not None
    return len(enc.encode_ordinary(text))


def cost(texts: list[str], budget: int = 2000, rounds: int = 3) -> dict[str, dict[str, float]]:
    """Counting a prompt-sized block (`budget` of the service's tokens, lines of `texts`)
    with the service's count and with the BPE encoding: mean tokens and p50 ms per block."""
    import statistics
    import time

    from runtime_svc.domain.text import count_tokens

    blocks, lines, size = [], [], 0
    for text in texts:
        lines.append(text)
        size += count_tokens(text)
        if size >= budget:
            blocks.append("\n".join(lines))
            lines, size = [], 0
    counters = {"words and punctuation (today)": count_tokens}
    if available():
        counters[f"tiktoken {name()}"] = count
    out = {}
    for label, counter in counters.items():
        counter(blocks[0])
        samples = []
        for _ in range(rounds):
            for block in blocks:
                t = time.perf_counter()
                counter(block)
                samples.append((time.perf_counter() - t) * 1000)
        out[label] = {
            "tokens_mean": round(statistics.mean(counter(b) for b in blocks), 1),
            "p50_ms": round(statistics.median(samples), 3),
        }
    return out


if __name__ == "__main__":
    from bench import locomo

    turns = [
        f"{t['speaker']}: {t['text']}"
        for conv in locomo.conversations()
        for _, ts in locomo.sessions(conv)
        for t in ts
    ]
    for label, r in cost(turns).items():
        print(f"{label}: {r['tokens_mean']} tokens per block, {r['p50_ms']} ms per block (p50)")
