"""The registry of derived-record kinds: how each is found by source, purged, and whether
retrieval would return it now.

Purge and readback iterate `KINDS`, so a new kind (vectors, passages, caches, …) is added
here once and can be forgotten nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runtime_svc.services import fact_chains
from runtime_svc.storage import vectors
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction


@dataclass(frozen=True)
class Derivative:
    kind: str
    derivative_id: str
    eligible: bool  # whether retrieval would return (or inject) it now
    state: str  # stored | purged


@dataclass(frozen=True)
class Kind:
    name: str
    find: Callable[[Transaction, Stored], list[str]]
    purge: Callable[[Transaction, Stored], object]  # what it returns is not used
    # Whether retrieval would return this kind of the source now (the real query predicate).
    retrievable: Callable[[Transaction, Stored, int], bool]


def _index_entry(tx: Transaction, s: Stored) -> list[str]:
    return [f"{s.source.source_id}#index"] if tx.index.has(s.pk) else []


def _passages(tx: Transaction, s: Stored) -> list[str]:
    return [f"{s.source.source_id}#passage:{r.start}-{r.end}" for r in tx.index.passages(s.pk)]


def _generated_form(tx: Transaction, s: Stored) -> list[str]:
    return [f"{s.source.source_id}#generated"] if tx.sources.has_generated_form(s.pk) else []


def _supersessions(tx: Transaction, s: Stored) -> list[str]:
    return tx.fact_links.of_source(s.source.source_id)


def _facts(tx: Transaction, s: Stored) -> list[str]:
    return [fact_id for _, fact_id in tx.facts.ids_for_source(s.source.source_id)]


def _fact_index_rows(tx: Transaction, s: Stored) -> list[str]:
    return [f"fact_index#{row}" for row in tx.facts.index_rows_for_source(s.source.source_id)]


def _vectors(tx: Transaction, s: Stored) -> list[str]:
    return vectors.find_by_source(tx.conn, tx.sources.tenant_id, s.source.source_id)


def _prompt_records(tx: Transaction, s: Stored) -> list[str]:
    return tx.prompt_records.citing(s.source.source_id)


def _searchable(tx: Transaction, s: Stored, now_us: int) -> bool:
    return tx.index.retrievable(s.pk, now_us)


def _eligible_source(tx: Transaction, s: Stored, now_us: int) -> bool:
    return tx.sources.eligible_now(s.pk, now_us)


KINDS: tuple[Kind, ...] = (
    Kind("index_entry", _index_entry, lambda tx, s: tx.writer.unindex(s), _searchable),
    # A conversation's passages are index entries too (purged with them; listed one by one).
    Kind("passage", _passages, lambda tx, s: tx.writer.unindex(s), _searchable),
    Kind(
        "generated_form",
        _generated_form,
        lambda tx, s: tx.sources.purge_generated_form(s.pk),
        _searchable,  # injected into prompts only through its index entry
    ),
    # Before its facts go: their attributes' chains are relinked without them, so the
    # statement before each one is current again.
    Kind(
        "supersession",
        _supersessions,
        lambda tx, s: fact_chains.relink_source(tx, s.source.source_id, without=True),
        _eligible_source,
    ),
    Kind(
        "fact",
        _facts,
        lambda tx, s: tx.facts.purge_for_source(s.source.source_id),
        _eligible_source,  # fact search, profile and ask join the source's eligibility
    ),
    Kind(
        "fact_index_row",
        _fact_index_rows,
        lambda tx, s: tx.facts.purge_index_rows(s.source.source_id),
        _eligible_source,
    ),
    Kind(
        "vector",
        _vectors,
        # Its vectors, and its place in the queue of sources waiting to be embedded.
        lambda tx, s: _purge_vectors(tx, s.source.source_id),
        _eligible_source,  # the semantic side joins the source's eligibility
    ),
    Kind(
        "prompt_record",
        _prompt_records,
        lambda tx, s: tx.prompt_records.purge_citing(s.source.source_id),
        _eligible_source,
    ),
)


def _purge_vectors(tx: Transaction, source_id: str) -> None:
    tx.embedding_queue.flush()  # the places queued before it, so that the purge sees them
    vectors.purge(tx.conn, tx.embedding_queue.tenant_id, source_id)


def purge(tx: Transaction, stored: Stored) -> None:
    """Deletes every derived record of the source, of every registered kind."""
    for kind in KINDS:
        kind.purge(tx, stored)


def purge_facts(tx: Transaction, stored: Stored) -> None:
    """Deletes the source's facts and what is made of them (an append held it for review:
    approval extracts them again)."""
    for kind in KINDS:
        if kind.name in _FACT_KINDS:
            kind.purge(tx, stored)


_FACT_KINDS = frozenset({"supersession", "fact", "fact_index_row"})


def purge_for_rebuild(tx: Transaction, stored: Stored) -> None:
    """Deletes every derived record a conversation's appended turns may have reached (a
    partial erasure: all of them are derived again from what is left). The generated form
    stays: a conversation's is made at insert, from the messages it was inserted with,
    which a partial erasure keeps unless they are the erased principal's (the source row
    then makes it again from what is left, `turn_log.emptied`)."""
    for kind in KINDS:
        if kind.name != "generated_form":
            kind.purge(tx, stored)


def readback(tx: Transaction, stored: Stored, now_us: int) -> list[Derivative]:
    """Every registered kind: each stored record with whether retrieval would return it now,
    or one `purged` line when none remains."""
    out = []
    for kind in KINDS:
        found = kind.find(tx, stored)
        if not found:
            out.append(
                Derivative(kind.name, f"{stored.source.source_id}#{kind.name}", False, "purged")
            )
            continue
        live = kind.retrievable(tx, stored, now_us)
        out += [Derivative(kind.name, i, live, "stored") for i in found]
    return out
