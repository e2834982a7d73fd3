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
        """The chain against its head. A read's statements may each see what committed
        before it (PostgreSQL): a chain that does not end at the head read first is judged
        only if the head is still that one after the receipts were read (every write of a
        receipt moves it); otherwise it is read again."""
        for _ in range(VERIFY_READS):
            with self._uow.read(caller.tenant_id) as tx:
                head = tx.tenant.get()
                found = audit.verify(
                    tx.receipts.all(),
                    caller.tenant_id,
                    head_sequence=head.receipt_sequence,
                    head_hash=head.receipt_head_hash,
                )
                if found.ok:
                    return found
                now = tx.tenant.get()
                if (now.receipt_sequence, now.receipt_head_hash) == (
                    head.receipt_sequence,
                    head.receipt_head_hash,
                ):
                    return found
        return found


VERIFY_READS = 5  # reads of a chain that writes kept moving before its verdict stands
