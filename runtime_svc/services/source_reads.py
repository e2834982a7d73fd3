"""Use cases: read one source, list sources (metadata only) and memories (by review status)."""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract import scopes, validation
from agentmem.contract.scopes import Scope
from agentmem_kernel import paging
from runtime_svc.domain import turns
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.sources import Source
from runtime_svc.services.clock import Clock
from runtime_svc.storage.source_pages import Position, SourceFilter, Summary
from runtime_svc.storage.source_rows import Stored
from runtime_svc.storage.transaction import Transaction
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class Attributed:
    """A source with its appended turns, each with who appended it (none for a source
    that is not a conversation, or one never appended to)."""

    source: Source
    turns: tuple[turns.AppendedTurn, ...] = ()


def _attributed(tx: Transaction, found: list[Stored]) -> list[Attributed]:
    records = tx.sources.turn_records([s.pk for s in found if s.source.body.messages])
    return [
        Attributed(s.source, turns.attributed(records.get(s.pk, ()), len(s.source.body.messages)))
        for s in found
    ]


class SourceReads:
    def __init__(self, uow: UnitOfWork, clock: Clock) -> None:
        self._uow, self._clock = uow, clock

    def get(self, caller: Caller, source_id: str, include_content: bool) -> tuple[Source, str]:
        """The source and its effective retrieval state."""
        found, state = self.get_attributed(caller, source_id, include_content)
        return found.source, state

    def get_attributed(
        self, caller: Caller, source_id: str, include_content: bool
    ) -> tuple[Attributed, str]:
        """The source with its appended turns' appenders, and its effective retrieval state."""
        check_source_id(source_id)
        if include_content:
            scopes.require(caller.scopes, Scope.CONTENT_READ)
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
            (found,) = _attributed(tx, [stored])
        return found, stored.source.state(self._clock())

    def list_sources(
        self, caller: Caller, f: SourceFilter, page_size: int, page_token: str
    ) -> tuple[list[Summary], str]:
        validation.identifier("filter.thread_id", f.thread_id, required=False)
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "sources-newest", repr(f))
        after = _position(page_token, key)
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page(f, after, size + 1, self._clock())
        more = len(rows) > size
        rows = rows[:size]
        last = rows[-1] if more else None
        return rows, paging.encode(
            key, Position(last.created_at_us, last.source_id).text()
        ) if last else ""

    def list_memories(
        self, caller: Caller, statuses: tuple[str, ...], page_size: int, page_token: str
    ) -> tuple[list[Source], str]:
        """Memories of the review statuses, newest first."""
        found, token = self.list_attributed(caller, statuses, page_size, page_token)
        return [f.source for f in found], token

    def list_attributed(
        self, caller: Caller, statuses: tuple[str, ...], page_size: int, page_token: str
    ) -> tuple[list[Attributed], str]:
        """Memories of the review statuses, newest first, with their appended turns'
        appenders (the review inbox shows whose text waits)."""
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "memories-newest", ",".join(statuses))
        after = _position(page_token, key)
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page_memories(statuses, after, size + 1)
            found = _attributed(tx, rows[:size])
        more = len(rows) > size
        last = found[-1].source if more else None
        return found, paging.encode(
            key, Position(last.created_at_us, last.source_id).text()
        ) if last else ""


def _position(page_token: str, key: str) -> Position | None:
    """Where the page starts: None for the first page; a token that verifies but holds no
    position is refused like any bad token."""
    text = paging.decode(page_token, key, "")
    if not text:
        return None
    position = Position.parse(text)
    if position is None:
        raise paging.invalid_page_token()
    return position


def check_source_id(source_id: str) -> str:
    return validation.identifier("source_id", source_id)
