"""The event feed while the log is compacted: a read of the feed checks the resume point
against the compaction mark and reads the events after it, both in one snapshot, so a
compaction committed between the two never makes events vanish from a watcher's stream
without EVENTS_COMPACTED (on PostgreSQL, each statement of a read saw what committed before
it)."""

from __future__ import annotations

from sqlalchemy import event

from agentmem.contract.errors import AgentmemError, Reason
from tests.service.facts_support import A, insert
from tests.service.wiring import Service


def test_a_compaction_during_a_feed_read_never_skips_events_silently(make_service):
    service: Service = make_service()
    cases = service.cases
    for i in range(5):
        insert(cases, f"memory number {i}")
    every = cases.feed.after(A, 0, [])
    assert len(every) >= 5
    resume = every[0].sequence  # the watcher has seen the first event
    compacted_through = every[3].sequence
    compacted: list[int] = []

    def compact_once(conn, cursor, statement, parameters, context, executemany):
        # Between reading the compaction mark and reading the events, the log is compacted.
        reads = statement.lstrip().upper().startswith("SELECT")
        if reads and "FROM events" in statement and not compacted:
            compacted.append(compacted_through)  # before the write, whose statements come here
            with service.uow.write(A.tenant_id) as tx:
                tx.events.compact_through(tx.counters, compacted_through)

    event.listen(service.db.reader, "before_cursor_execute", compact_once)
    try:
        try:
            got = cases.feed.after(A, resume, [])
        except AgentmemError as e:  # told: the watcher knows it lost events
            assert e.reason is Reason.EVENTS_COMPACTED
        else:  # or given every event after its resume point, with no gap
            assert [e.sequence for e in got] == [e.sequence for e in every[1:]]
    finally:
        event.remove(service.db.reader, "before_cursor_execute", compact_once)
    assert compacted
    # The compaction itself did take: a later read is told.
    try:
        cases.feed.after(A, resume, [])
        raise AssertionError("a resume point behind the compaction mark must be refused")
    except AgentmemError as e:
        assert e.reason is Reason.EVENTS_COMPACTED
