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
from runtime_svc.storage import turn_log
from runtime_svc.storage.source_rows import Stored

if TYPE_CHECKING:
    from runtime_svc.storage.transaction import Transaction


class SourceWriter:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def create(self, source: Source, *, indexed: bool = False) -> Stored:
        """A new source's row; with `indexed` (an active source) its index entry too, the
        row recording the entry's revision as it is written (one statement less per
        insert than writing it afterwards)."""
        if not indexed:
            return Stored(self._tx.sources.add(source), source, indexed_revision=0)
        pk = self._tx.sources.add(source, indexed_revision=source.revision)
        self._put(Stored(pk, source, indexed_revision=0), revision_recorded=True)
        return Stored(pk, source, source.revision)

    def save(self, stored: Stored, updated: Source, by: turn_log.Appender | None = None) -> Stored:
        """A new revision's state; an existing index entry follows the new eligibility.
        Messages appended (a conversation's tail grown) are written as one turn row, with
        who appended them (`by`), and the passages of those messages join the source's
        index entry, if it has one (the passages it had stay as they are); the row records
        the entry's revision in the statement that saves its state."""
        tx = self._tx
        first = len(stored.source.body.messages)
        grown = updated.body is not stored.source.body and len(updated.body.messages) > first
        indexed = tx.index.has(stored.pk)
        extended = grown and indexed
        tx.sources.save_state(
            stored.pk,
            updated,
            (first, by or turn_log.Appender("", "")) if grown else None,
            indexed_revision=updated.revision if extended else None,
        )
        # An append that leaves eligibility as it was leaves the entries it had untouched.
        if indexed and not (grown and updated.indexable() == stored.source.indexable()):
            tx.index.set_eligible(stored.pk, updated.indexable(), updated.revision)
        if extended:
            tx.index.put_passages(
                stored.pk,
                passages.derive(updated.body.messages, tx.window, first),
                eligible=updated.indexable(),
                revision=updated.revision,
                revision_recorded=True,
            )
        return Stored(stored.pk, updated, updated.revision if indexed else 0)

    def index(self, stored: Stored) -> Stored:
        """Derives the index entry of an active source: a conversation's passages, or one entry
        for the whole text."""
        tx, source = self._tx, stored.source
        if tx.index.has(stored.pk):
            tx.index.set_eligible(stored.pk, source.indexable(), source.revision)
        else:
            self._put(stored)
        return Stored(stored.pk, source, source.revision)

    def _put(self, stored: Stored, revision_recorded: bool = False) -> None:
        tx, source = self._tx, stored.source
        if source.body.messages and not source.body.generated:
            tx.index.put_passages(
                stored.pk,
                passages.derive(source.body.messages, tx.window),
                eligible=source.indexable(),
                revision=source.revision,
                revision_recorded=revision_recorded,
            )
        else:
            tx.index.put(
                stored.pk,
                source.body.generated_form(),
                eligible=source.indexable(),
                revision=source.revision,
                revision_recorded=revision_recorded,
            )
        tx.counters.indexed_docs += 1

    def unindex(self, stored: Stored) -> None:
        """Deletes the index entry, if there is one."""
        if self._tx.index.remove(stored.pk):
            self._tx.counters.indexed_docs -= 1
