"""VerifyAuditChain while the tenant writes: a receipt committed during the verification
never reads as a chain extended behind the head's back: the head and the receipts are read in
one snapshot (on PostgreSQL, each statement of a read used to see what committed before it)."""

from __future__ import annotations

from sqlalchemy import event

from tests.service.facts_support import A, insert
from tests.service.wiring import Service


def test_a_write_during_verification_is_no_broken_chain(make_service):
    service: Service = make_service()
    cases = service.cases
    insert(cases, "the first memory")
    written: list[str] = []

    def write_once(conn, cursor, statement, parameters, context, executemany):
        # Between reading the chain's head and reading its receipts, another call writes.
        reads = statement.lstrip().upper().startswith("SELECT")
        if reads and "audit_receipts" in statement and not written:
            written.append("once")  # before the write, whose statements come here too
            insert(cases, "a memory stored meanwhile")

    event.listen(service.db.reader, "before_cursor_execute", write_once)
    try:
        found = cases.audit.verify(A)
    finally:
        event.remove(service.db.reader, "before_cursor_execute", write_once)
    assert written
    assert found.ok, found
    assert cases.audit.verify(A).ok
