"""Use cases: read one source, list sources (metadata only) and memories (by review status)."""

from __future__ import annotations

from agentmem.core import paging, scopes, validation
from agentmem.core.scopes import Scope
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.sources import Source
from runtime_svc.services.clock import Clock
from runtime_svc.storage.sources import SourceFilter, Summary
from runtime_svc.storage.unit_of_work import UnitOfWork


class SourceReads:
    def __init__(self, uow: UnitOfWork, clock: Clock) -> None:
        self._uow, self._clock = uow, clock

    def get(self, caller: Caller, source_id: str, include_content: bool) -> tuple[Source, str]:
        """The source and its effective retrieval state."""
        check_source_id(source_id)
        if include_content:
            scopes.require(caller.scopes, Scope.CONTENT_READ)
        with self._uow.read(caller.tenant_id) as tx:
            stored = tx.sources.require(source_id)
        return stored.source, stored.source.state(self._clock())

    def list(
        self, caller: Caller, f: SourceFilter, page_size: int, page_token: str
    ) -> tuple[list[Summary], str]:
        validation.identifier("filter.thread_id", f.thread_id, required=False)
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "sources", repr(f))
        after = paging.decode(page_token, key, "")
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page(f, after, size + 1, self._clock())
        more = len(rows) > size
        rows = rows[:size]
        return rows, paging.encode(key, rows[-1].source_id) if more else ""

    def list_memories(
        self, caller: Caller, statuses: tuple[str, ...], page_size: int, page_token: str
    ) -> tuple[list[Source], str]:
        size = validation.page_size(page_size)
        key = paging.query_key(caller.tenant_id, "memories", ",".join(statuses))
        after = paging.decode(page_token, key, "")
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.sources.page_memories(statuses, after, size + 1)
        more = len(rows) > size
        found = [r.source for r in rows[:size]]
        return found, paging.encode(key, found[-1].source_id) if more else ""


def check_source_id(source_id: str) -> str:
    return validation.identifier("source_id", source_id)
