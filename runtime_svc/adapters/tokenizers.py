"""Prompt token counters, offline: OpenAI's BPE encodings (o200k_base for GPT-4o and later,
cl100k_base for GPT-4) through `tiktoken`, their ranks read from the file the `bpe-openai`
package ships (gzipped) instead of the download `tiktoken` makes at first use, and checked
against the SHA-256 `tiktoken` itself expects for that encoding. `words` (words and
punctuation marks, `runtime_svc.domain.text.count_tokens`) needs nothing.

`counter(name)` gives a `Counter` (a name and a `count(text)` function); an encoding whose
ranks or library are missing falls back to `words`, and the counter says why. Encodings are
built once per process (a few hundred milliseconds) and line counts are cached by digest.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime_svc.domain.text import count_tokens

WORDS = "words"
O200K = "o200k_base"
CL100K = "cl100k_base"
NAMES = (O200K, CL100K, WORDS)
CACHED_LINES = 65536

_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
_FIM = ("<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")

# What `tiktoken` (tiktoken_ext.openai_public) defines for each encoding: the SHA-256 of its
# ranks file, the pre-tokenising pattern and the special tokens.
_SPECS: dict[str, dict[str, Any]] = {
    O200K: {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "special_tokens": {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    },
    CL100K: {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        "special_tokens": {
            _ENDOFTEXT: 100257,
            _FIM[0]: 100258,
            _FIM[1]: 100259,
            _FIM[2]: 100260,
            _ENDOFPROMPT: 100276,
        },
    },
}


@dataclass(frozen=True)
class Counter:
    """`name`: the unit counts are in (an encoding's name, or "words"); `fallback`: why the
    configured encoding could not be had ("" when it is the one configured)."""

    name: str
    count: Callable[[str], int]
    fallback: str = ""


def ranks_file(encoding: str) -> bytes | None:
    """The encoding's `.tiktoken` ranks file as a package ships it (None: not installed)."""
    spec = importlib.util.find_spec("bpe_openai")  # found, not imported (it loads its own)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        shipped = Path(folder) / "data" / f"{encoding}.tiktoken.gz"
        if shipped.is_file():
            return gzip.decompress(shipped.read_bytes())
    return None


_lock = threading.Lock()
_built: dict[str, Any] = {}


def encoding(name: str) -> Any | None:
    """The `tiktoken.Encoding` of `name`, built once from the shipped ranks; None when
    `tiktoken` or the ranks are missing, or the ranks are not the ones `tiktoken` expects."""
    spec = _SPECS.get(name)
    if spec is None:
        return None
    with _lock:
        if name in _built:
            return _built[name]
        _built[name] = _build(name, spec)
        return _built[name]


def _build(name: str, spec: dict[str, Any]) -> Any | None:
    try:
        import tiktoken
    except ImportError:
        return None
    data = ranks_file(name)
    if data is None or hashlib.sha256(data).hexdigest() != spec["sha256"]:
        return None
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=name,
        pat_str=spec["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=spec["special_tokens"],
    )


def counter(name: str = O200K) -> Counter:
    """The counter for `name` (one of `NAMES`); a BPE encoding that cannot be had offline
    falls back to words."""
    if name == WORDS:
        return Counter(WORDS, count_tokens)
    enc = encoding(name)
    if enc is None:
        why = "tiktoken is not installed" if not _has_tiktoken() else f"no {name} ranks"
        return Counter(WORDS, count_tokens, fallback=why)
    encode = enc.encode_ordinary
    # Line counts cached by the line's digest: the cache holds no memory text, so an erased
    # memory's lines are not kept alive in the process by it.
    held: OrderedDict[bytes, int] = OrderedDict()
    lock = threading.Lock()

    def count(text: str) -> int:
        key = hashlib.blake2b(text.encode(), digest_size=16).digest()
        with lock:
            n = held.get(key)
            if n is not None:
                held.move_to_end(key)
                return n
        n = len(encode(text))
        with lock:
            held[key] = n
            if len(held) > CACHED_LINES:
                held.popitem(last=False)
        return n

    return Counter(name, count)


def _has_tiktoken() -> bool:
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return False
    return True
