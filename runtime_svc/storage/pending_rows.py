"""Rows of one table appended by the mutations of a group commit, written together (one
statement) before it commits, instead of one statement per mutation: on PostgreSQL each
statement is a round trip the writer thread waits for, with every other write queued
behind it.

The rows of the open savepoint are kept apart: a failing mutation's rows are dropped with
it. Anything that reads or deletes rows of the table in the transaction flushes first, so
it sees every row appended before it; if that happens inside a savepoint that is then
rolled back, the earlier mutations' rows it wrote are undone with it, and are written
again later (as `event_log.JournalRows` does for the journal's two tables).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql import Executable

from runtime_svc.storage import compiled

Row = dict[str, Any]


class PendingRows:
    def __init__(self, conn: Connection, stmt: Executable, unique_by: str = "") -> None:
        """`unique_by`: a column whose value a flush writes once (its first row), for a
        statement that may not touch one row twice (an upsert)."""
        self._conn, self._stmt, self._unique_by = conn, stmt, unique_by
        self._kept: list[Row] = []  # of released savepoints
        self._open: list[Row] = []  # of the open savepoint
        self._exposed: list[Row] = []  # kept, flushed in the open savepoint

    def add(self, row: Row) -> None:
        self._open.append(row)

    def flush(self) -> None:
        rows = self._kept + self._open
        if self._unique_by:
            firsts: dict[Any, Row] = {}
            for row in rows:
                firsts.setdefault(row[self._unique_by], row)
            rows = list(firsts.values())
        if rows:
            compiled.execute_many(self._conn, self._stmt, rows)
        self._exposed += self._kept
        self._kept.clear()
        self._open.clear()

    def release(self) -> None:
        """The open savepoint was released: its rows are the transaction's."""
        self._kept += self._open
        self._open.clear()
        self._exposed.clear()

    def rollback(self) -> None:
        """The open savepoint was rolled back: its rows are dropped; the kept rows flushed
        inside it were undone, so they are pending again."""
        self._kept += self._exposed
        self._open.clear()
        self._exposed.clear()
