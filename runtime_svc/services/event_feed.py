"""Use cases: read the tenant's event log from a resume point, and compact it by age."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import metrics
from runtime_svc.domain import events as domain_events
from runtime_svc.domain.caller import Caller
from runtime_svc.services.clock import Clock
from runtime_svc.storage import event_log
from runtime_svc.storage.unit_of_work import UnitOfWork

BATCH = 500


class EventFeed:
    def __init__(self, uow: UnitOfWork, clock: Clock, retention: timedelta) -> None:
        self._uow, self._clock, self._retention = uow, clock, retention

    def after(
        self, caller: Caller, after_sequence: int, kinds: Sequence[str]
    ) -> list[domain_events.LoggedEvent]:
        """The next batch after the resume point; EVENTS_COMPACTED if events were lost to it,
        RESUME_POINT_AHEAD if it is past the log's head."""
        validation.non_negative("after_sequence", after_sequence)
        with self._uow.read(caller.tenant_id) as tx:
            state = tx.tenant.get()
            compacted = state.events_compacted_through
            if after_sequence > state.event_sequence:
                # A resume point this log never reached (a restore from an older backup):
                # waiting would skip the events that take those sequence numbers again.
                raise AgentmemError(
                    Reason.RESUME_POINT_AHEAD,
                    metadata={"head_sequence": str(state.event_sequence)},
                )
            if 0 < after_sequence < compacted:
                raise AgentmemError(
                    Reason.EVENTS_COMPACTED, metadata={"oldest_sequence": str(compacted + 1)}
                )
            position = max(after_sequence, compacted)
            metrics.WATCH_LAG.observe(max(state.event_sequence - position, 0))
            return tx.events.after(position, kinds, BATCH)

    def compact_expired(self) -> int:
        """Drops events older than the retention; returns how many tenants were compacted."""
        cutoff = self._clock() - int(self._retention.total_seconds() * 1_000_000)
        with self._uow.read("") as tx:
            tenants = event_log.tenants_with_events_before(tx.conn, cutoff)
        for tenant_id in tenants:
            with self._uow.write(tenant_id) as tx:
                newest = tx.events.newest_before(cutoff)
                if newest:
                    tx.events.compact_through(tx.counters, newest)
        return len(tenants)
