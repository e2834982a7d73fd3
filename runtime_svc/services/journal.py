"""Every mutation records, in its own transaction, an event and a hash-chained receipt.

This is the one way a mutation is journaled; use cases call `record` after the change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Claim, Erased, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.ids import new_id
from runtime_svc.storage.transaction import Transaction


@dataclass(frozen=True)
class Target:
    kind: str
    id: str
    revision: int


@dataclass(frozen=True)
class EventRetention:
    max_events_per_tenant: int


class Journal:
    def __init__(self, retention: EventRetention, on_event: Callable[[str], None]) -> None:
        self._retention = retention
        self._on_event = on_event  # wakes watchers of the tenant once the change committed

    def record(
        self,
        tx: Transaction,
        caller: Caller,
        *,
        action: str,
        target: Target,
        event: domain_events.DomainEvent | None,
        at_us: int,
        claim: Claim | None = None,
        erased: Erased | None = None,
    ) -> Receipt:
        if event is not None:  # some mutations are audited without an event
            tx.events.append(tx.counters, event, new_id("evt"), at_us)
        overflow = tx.counters.event_sequence - self._retention.max_events_per_tenant
        if overflow > 0:
            tx.events.compact_through(tx.counters, overflow)
        receipt = tx.receipts.append(
            tx.counters,
            Receipt(
                receipt_id=new_id("rcpt"),
                sequence=0,
                at_us=at_us,
                action=action,
                target_kind=target.kind,
                target_id=target.id,
                target_revision=target.revision,
                principal_id=caller.principal_id,
                request_id=caller.request_id,
                save_intent=claim.save_intent if claim else "",
                save_intent_held=claim.held if claim else False,
                turns_erased=erased.turns if erased else 0,
                messages_erased=erased.messages if erased else 0,
            ),
        )
        tenant_id = caller.tenant_id
        tx.after_commit(lambda: self._on_event(tenant_id))
        return receipt
