"""One door per RPC: the hand-written modules that name an RPC of the public service (in
code: an identifier or a string naming it, not prose) are few. Adding an RPC touches its
proto, its row in the RPC table (`agentmem/contract/rpcs.py`), the runtime's method
(`runtime_svc/grpc/rpc_*.py`), the client's method and the surfaces that expose it
(docs/development.md, "Where new things go"); the gateway forwards it by the table and
checks it by its request's type. More than six modules naming one RPC is plumbing again."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable, Mapping

from agentmem.contract.rpcs import SERVICE
from tests.unit.test_layers import sources

MOST = 6
RPCS = {m.name for m in SERVICE.methods}


def hand_written() -> dict[str, str]:
    """Our modules as the layer test reads them (generated messages and migrations aside),
    without the generated asyncio twin of the client's methods."""
    return {p: text for p, text in sources().items() if not text.startswith('"""GENERATED')}


def named(source: str, rpcs: Iterable[str]) -> set[str]:
    """The RPCs a module names in code: an identifier, or a string that is the name or ends
    with `/Name` (a full method name)."""
    wanted = set(rpcs)
    found = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and token.string in wanted:
            found.add(token.string)
        elif token.type == tokenize.STRING:
            text = token.string.strip("rbfRBF").strip("'\"")
            found |= {n for n in wanted if text == n or text.endswith("/" + n)}
    return found


def modules_naming(sources: Mapping[str, str]) -> dict[str, list[str]]:
    by_rpc: dict[str, list[str]] = {name: [] for name in RPCS}
    for path, source in sources.items():
        for name in named(source, RPCS):
            by_rpc[name].append(path)
    return by_rpc


def test_no_rpc_is_named_in_more_than_six_hand_written_modules() -> None:
    crowded = {n: paths for n, paths in modules_naming(hand_written()).items() if len(paths) > MOST}
    assert not crowded, crowded


def test_each_rpc_has_its_row_and_its_runtime_method() -> None:
    for name, paths in modules_naming(hand_written()).items():
        assert "agentmem/contract/rpcs.py" in paths, name
        assert any(p.startswith("runtime_svc/grpc/rpc_") for p in paths), name


def test_prose_and_other_words_are_not_counted() -> None:
    source = (
        '"""InsertMemory is described here."""\n'
        "# AppendMessages in a comment\n"
        'x = "InsertMemoryRequest"\n'
        'y = "/agentmem.v1.MemoryService/Ask"\n'
        "def SearchMemories(): ...\n"
    )
    assert named(source, RPCS) == {"Ask", "SearchMemories"}
