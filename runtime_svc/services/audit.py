"""Use cases: page through the tenant's receipts and verify its hash chain."""

from __future__ import annotations

from agentmem.contract import validation
from agentmem_kernel import paging
from runtime_svc.domain import audit
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.storage.unit_of_work import UnitOfWork


class Audit:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    def list(
        self,
        caller: Caller,
        target_id: str,
        page_size: int,
        page_token: str,
        newest_first: bool = False,
    ) -> tuple[list[Receipt], str]:
        validation.identifier("target_id", target_id, required=False)
        size = validation.page_size(page_size)
        order = ("newest first",) if newest_first else ()
        key = paging.query_key(caller.tenant_id, "audit", target_id, *order)
        after = paging.decode(page_token, key, 0)
        with self._uow.read(caller.tenant_id) as tx:
            rows = tx.receipts.page(target_id, after, size + 1, newest_first)
        more = len(rows) > size
        rows = rows[:size]
        return rows, paging.encode(key, rows[-1].sequence) if more else ""

    def verify(self, caller: Caller) -> audit.Verification:
        """The chain against its head, both read in one snapshot (a receipt committed
        meanwhile is in neither)."""
        with self._uow.read(caller.tenant_id) as tx:
            head = tx.tenant.get()
            return audit.verify(
                tx.receipts.all(),
                caller.tenant_id,
                head_sequence=head.receipt_sequence,
                head_hash=head.receipt_head_hash,
            )
