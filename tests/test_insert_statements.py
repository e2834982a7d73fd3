"""The statements of the write path read only the rows they are about (SQLite query plans, on a
real database): an insert, a retried insert, a classification change, a readback and an
erasure must not cost more as the tenant's memories grow."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event

from agentmem_kernel import config
from agentmem_kernel.config import Storage
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.sources import Classification, Message
from runtime_svc.services.appends import AppendCommand
from runtime_svc.services.inserts import InsertCommand, Inserts
from runtime_svc.services.source_lifecycle import ClassifyCommand, EraseCommand
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.service.wiring import wired

CALLER = Caller("tenant-a", "alice", "user", frozenset())
# A tenant-wide read of a table that grows with the tenant's memories: postings by tenant
# (and word) instead of by source key, sources by tenant instead of by key or request id.
TENANT_WIDE = re.compile(
    r"(SCAN (search_postings|sources)\b)"
    r"|(SEARCH search_postings USING .*INDEX ix_search_postings_impact"
    r" \(tenant_id=\?( AND term=\?)?\))"
    r"|(SEARCH sources USING .*INDEX \w+ \(tenant_id=\?\))"
)


@pytest.fixture
def parts(tmp_path):
    db = open_database(Storage(url=f"sqlite:///{tmp_path / 's.db'}"))
    migrate.upgrade(db.writer)
    cases = wired(config.load(None, {}), UnitOfWork(db))  # as the runtime wires them
    inserts, lifecycle = cases.inserts, cases.lifecycle
    yield db, inserts, lifecycle
    db.dispose()


def insert(inserts: Inserts, text: str, caller: Caller = CALLER):  # type: ignore[no-untyped-def]
    cmd = InsertCommand(content=text)
    return inserts.commit_insert(caller, cmd, inserts.prepare(caller, cmd))


def test_write_statements_read_only_their_own_rows(parts):
    db, inserts, lifecycle = parts
    for i in range(20):
        insert(inserts, f"note {i} about the garden shed and its blue door")
    statements: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, executemany):  # type: ignore[no-untyped-def]
        statements.append((statement, parameters[0] if executemany else parameters))

    event.listen(db.writer, "before_cursor_execute", capture)
    event.listen(db.reader, "before_cursor_execute", capture)
    try:
        first = insert(inserts, "the blue door sticks in winter")
        retry = Caller("tenant-a", "alice", "user", frozenset(), request_id="req-1")
        insert(inserts, "oil the hinges of the blue door", retry)
        assert insert(inserts, "oil the hinges of the blue door", retry).deduplicated
        lifecycle.classify(
            CALLER, ClassifyCommand(first.source_id, first.revision, Classification.COLD)
        )
        lifecycle.classify(CALLER, ClassifyCommand(first.source_id, 2, Classification.ACTIVE))
        second = insert(inserts, "paint the blue door green in spring")
        assert lifecycle.readback(CALLER, second.source_id)
        lifecycle.erase(CALLER, EraseCommand(first.source_id, 3))
    finally:
        event.remove(db.writer, "before_cursor_execute", capture)
        event.remove(db.reader, "before_cursor_execute", capture)

    reads = [(s, p) for s, p in statements if re.match(r"\s*(SELECT|UPDATE|DELETE)", s)]
    assert any("search_postings" in s for s, _ in reads)  # the index's own statements ran
    assert_plans_avoid(db, reads, TENANT_WIDE)


def assert_plans_avoid(db, reads, pattern) -> None:  # type: ignore[no-untyped-def]
    """No statement's SQLite query plan has a step matching `pattern`."""
    with db.writer.connect() as conn:
        for statement, parameters in reads:
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            wide = [row[3] for row in plan if pattern.search(row[3])]
            assert not wide, (statement, wide)


def test_an_append_writes_its_source_row_once(parts):
    """An append's new state, size and index revision are one UPDATE of the source's row (a
    conversation's row holds the messages it was inserted with: SQLite reads and writes
    the whole record for each UPDATE)."""
    db, inserts, _ = parts
    cases = wired(config.load(None, {}), UnitOfWork(db))
    started = inserts.commit_insert(
        CALLER,
        cmd := InsertCommand(messages=[Message("user", "plan the garden shed")]),
        inserts.prepare(CALLER, cmd),
    )
    statements: list[str] = []

    def capture(*args):  # type: ignore[no-untyped-def]
        statements.append(args[2])

    event.listen(db.writer, "before_cursor_execute", capture)
    try:
        done = cases.appends.append(
            CALLER,
            AppendCommand(started.source_id, 1, (Message("assistant", "a blue door, then"),)),
        )
    finally:
        event.remove(db.writer, "before_cursor_execute", capture)
    assert done.revision == 2
    assert len([s for s in statements if re.match(r"\s*UPDATE sources\b", s)]) == 1
