"""The one writer of a source's state, its index entry and the tenant's counters.

Every source change goes through here (called by `runtime_svc.services.source_changes`):
state columns through `SourceRepository.save_state`, the index entry and its scope through
the search index, and `indexed_docs` from what the index actually did, never from a column
that the same transaction may already have changed.
"""

from __future__ import annotations

from collections.abc import Callable

from runtime_svc.domain import passages
from runtime_svc.domain.passages import Window
from runtime_svc.domain.sources import Source
from runtime_svc.domain.turns import TurnErasure
from runtime_svc.storage import turn_log
from runtime_svc.storage.postings import Postings
from runtime_svc.storage.repositories import TenantCounters
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.sources import SourceRepository


class SourceWriter:
    def __init__(
        self,
        sources: SourceRepository,
        index: Postings,
        counters: Callable[[], TenantCounters],
        window: Window,
    ) -> None:
        """The transaction's source rows and search index; `counters`: its tenant's counters
        as they are at each change (the unit of work sets them once it holds the tenant's
        row); `window`: how conversations' passages are derived."""
        self._sources, self._index, self._counters = sources, index, counters
        self._window = window

    def create(self, source: Source, *, indexed: bool = False) -> Stored:
        """A new source's row; with `indexed` (an active source) its index entry too, the
        row recording the entry's revision as it is written (one statement less per
        insert than writing it afterwards)."""
        if not indexed:
            return Stored(self._sources.add(source), source, indexed_revision=0)
        pk = self._sources.add(source, indexed_revision=source.revision)
        self._put(Stored(pk, source, indexed_revision=0), revision_recorded=True)
        return Stored(pk, source, source.revision)

    def save(self, stored: Stored, updated: Source, by: turn_log.Appender | None = None) -> Stored:
        """A new revision's state; an existing index entry follows the new eligibility.
        Messages appended (a conversation's tail grown) are written as one turn row, with
        who appended them (`by`), and the passages of those messages join the source's
        index entry, if it has one (the passages it had stay as they are); the row records
        the entry's revision in the statement that saves its state."""
        first = len(stored.source.body.messages)
        grown = updated.body is not stored.source.body and len(updated.body.messages) > first
        indexed = self._index.has(stored.pk)
        extended = grown and indexed
        self._sources.save_state(
            stored.pk,
            updated,
            (first, by or turn_log.Appender("", "")) if grown else None,
            indexed_revision=updated.revision if extended else None,
        )
        # An append that leaves eligibility as it was leaves the entries it had untouched.
        if indexed and not (grown and updated.indexable() == stored.source.indexable()):
            self._index.set_eligible(stored.pk, updated.indexable(), updated.revision)
        if extended:
            self._index.put_passages(
                stored.pk,
                passages.derive(updated.body.messages, self._window, first),
                eligible=updated.indexable(),
                revision=updated.revision,
                revision_recorded=True,
            )
        return Stored(stored.pk, updated, updated.revision if indexed else 0)

    def erase_turns(self, stored: Stored, updated: Source, plan: TurnErasure) -> Stored:
        """A partial erasure's new revision. Its index entry was purged with the rest of
        its derived records; `index` derives it again from what is left."""
        self._sources.save_turns_erased(stored.pk, updated, plan)
        return Stored(stored.pk, updated, 0)

    def index(self, stored: Stored) -> Stored:
        """Derives the index entry of an active source: a conversation's passages, or one entry
        for the whole text."""
        source = stored.source
        if self._index.has(stored.pk):
            self._index.set_eligible(stored.pk, source.indexable(), source.revision)
        else:
            self._put(stored)
        return Stored(stored.pk, source, source.revision)

    def _put(self, stored: Stored, revision_recorded: bool = False) -> None:
        source = stored.source
        if source.body.messages and not source.body.generated:
            self._index.put_passages(
                stored.pk,
                passages.derive(source.body.messages, self._window),
                eligible=source.indexable(),
                revision=source.revision,
                revision_recorded=revision_recorded,
            )
        else:
            self._index.put(
                stored.pk,
                source.body.generated_form(),
                eligible=source.indexable(),
                revision=source.revision,
                revision_recorded=revision_recorded,
            )
        self._counters().indexed_docs += 1

    def unindex(self, stored: Stored) -> None:
        """Deletes the index entry, if there is one."""
        if self._index.remove(stored.pk):
            self._counters().indexed_docs -= 1
