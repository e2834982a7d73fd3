"""Relinking fact chains reads only the statements of the attributes it is about (SQLite query
plans, on a real database): an insert, a classification change, a retraction and an erasure
cost the same however many facts the tenant has."""

from __future__ import annotations

import re

from sqlalchemy import event

from runtime_svc.domain.caller import Caller
from runtime_svc.domain.sources import Classification
from runtime_svc.services.clock import system_clock
from runtime_svc.services.fact_retraction import FactRetraction, RetractCommand
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.source_lifecycle import ClassifyCommand, EraseCommand
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.test_insert_statements import (  # noqa: F401 (parts: a fixture)
    CALLER,
    assert_plans_avoid,
    insert,
    parts,
)

REVIEWER = Caller("tenant-a", "alice", "user", frozenset({"memory.review"}))

# A read of every fact or source of the tenant (or of the table).
TENANT_WIDE = re.compile(
    r"SCAN (facts|sources)\b"
    r"|SEARCH (facts|sources) USING .*INDEX \w+ \(tenant_id=\?\)"
)


def test_chain_statements_read_only_their_attributes_rows(parts):  # noqa: F811
    db, inserts, lifecycle = parts
    for i in range(30):
        insert(inserts, f"I like the colour number {i}. My friend {i} lives in Porto.")
    uow = UnitOfWork(db)
    retraction = FactRetraction(uow, Journal(EventRetention(1000), lambda _t: None), system_clock)
    statements: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, executemany):  # type: ignore[no-untyped-def]
        statements.append((statement, parameters[0] if executemany else parameters))

    event.listen(db.writer, "before_cursor_execute", capture)
    try:
        first = insert(inserts, "I live in Lisbon and I like jazz.")
        second = insert(inserts, "I moved to Berlin.")
        lifecycle.classify(CALLER, ClassifyCommand(second.source_id, 1, Classification.COLD))
        lifecycle.classify(CALLER, ClassifyCommand(second.source_id, 2, Classification.ACTIVE))
        with uow.read("tenant-a") as tx:
            ((_, berlin),) = tx.facts.ids_for_source(second.source_id)
        retraction.retract(REVIEWER, RetractCommand(berlin))
        assert lifecycle.readback(CALLER, first.source_id)
        lifecycle.erase(CALLER, EraseCommand(first.source_id, 1))
    finally:
        event.remove(db.writer, "before_cursor_execute", capture)

    chain_reads = [
        (s, p) for s, p in statements if re.match(r"\s*(SELECT|UPDATE|DELETE)", s) and "facts" in s
    ]
    assert any("superseded_by" in s for s, _ in chain_reads)  # the chain's own statements ran
    assert_plans_avoid(db, chain_reads, TENANT_WIDE)
