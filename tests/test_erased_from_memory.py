"""No hash of erased content is kept, in the runtime's memory either: what its caches worked
out from memories' texts (the stems a passage holds, by the text's digest; a word's stem) is
gone once the erasure returns."""

from __future__ import annotations

from agentmem.v1 import foreign_pb2
from runtime_svc.domain import text
from runtime_svc.retrieval import fusion
from tests.hybrid_support import hybrid_settings, wait_embedded
from tests.memory_helpers import insert, search_ids

SECRET = "zqvortexian"
MEMORY = f"My {SECRET} bicycle is teal and lives in the hallway"


def _held_anywhere(marker: int) -> bool:
    """Whether a cache of the fusion holds the stem's hash for some text."""
    caches = (fusion._stems._found, fusion._by_entry._found)
    return any(marker in stems for cache in caches for stems in list(cache.values()))


def test_an_erasure_empties_the_runtimes_caches_of_the_erased_text(
    local_model, vector_backend, make_stack
):
    client = make_stack(**hybrid_settings()).client()
    erased = insert(client, MEMORY).source_id
    insert(client, "I keep a red bicycle in the garage")
    wait_embedded(client)
    assert erased in search_ids(client, f"{SECRET} bicycle")
    marker = hash(text.stem(SECRET))
    assert _held_anywhere(marker)  # the search worked its words out and kept them

    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=erased, expected_revision=1))
    assert not _held_anywhere(marker)
    assert text.stem.cache_info().currsize == 0
    assert text._STEMMER.maxCacheSize == 0  # the stemmer keeps no words of its own
