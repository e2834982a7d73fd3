"""The one writer of a source's state, its index entry and the tenant's counters.

Every source change goes through here (called by `runtime_svc.services.source_changes`):
state columns through `SourceRepository.save_state`, the index entry and its scope through
the search index, and `indexed_docs` from what the index actually did, never from a column
that the same transaction may already have changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime_svc.domain import passages
from runtime_svc.domain.sources import Source
from runtime_svc.storage.sources import Stored

if TYPE_CHECKING:
    from runtime_svc.storage.unit_of_work import Transaction


class SourceWriter:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def create(self, source: Source) -> Stored:
        pk = self._tx.sources.add(source)
        return Stored(pk, source, indexed_revision=0)

    def save(self, stored: Stored, updated: Source) -> Stored:
        """A new revision's state; an existing index entry follows the new eligibility."""
        tx = self._tx
        tx.sources.save_state(stored.pk, updated)
        indexed = tx.index.has(stored.pk)
        if indexed:
            tx.index.set_eligible(stored.pk, updated.indexable(), updated.revision)
        return Stored(stored.pk, updated, updated.revision if indexed else 0)

    def index(self, stored: Stored, *, new: bool = False) -> Stored:
        """Derives the index entry of an active source: a conversation's passages, or one entry
        for the whole text. `new`: the source was created in this transaction (sources are
        never deleted, so its pk has never had an entry) and the index need not be asked."""
        tx, source = self._tx, stored.source
        if not new and tx.index.has(stored.pk):
            tx.index.set_eligible(stored.pk, source.indexable(), source.revision)
        elif source.body.messages and not source.body.generated:
            tx.index.put_passages(
                stored.pk,
                passages.derive(source.body.messages, tx.window),
                eligible=source.indexable(),
                revision=source.revision,
            )
            tx.counters.indexed_docs += 1
        else:
            tx.index.put(
                stored.pk,
                source.body.generated_form(),
                eligible=source.indexable(),
                revision=source.revision,
            )
            tx.counters.indexed_docs += 1
        return Stored(stored.pk, source, source.revision)

    def unindex(self, stored: Stored) -> None:
        """Deletes the index entry, if there is one."""
        if self._tx.index.remove(stored.pk):
            self._tx.counters.indexed_docs -= 1
