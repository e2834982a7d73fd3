"""Hot write statements, compiled once.

Every insert runs about ten statements in the writer thread, which holds the GIL the gRPC
loop needs too. SQLAlchemy's `execute` builds each statement's cache key, looks up its
compiled form and processes the parameters on every call; for the statements of the write
path that is most of their cost on SQLite. Here a Core statement is compiled once per
dialect and set of parameter names, and SQLite gets the SQL text and a parameter tuple
(`exec_driver_sql`: connection events, tracing spans included, still apply). Only for
statements whose columns need no bind processing (integers, floats, text) — which is every
column of the tables written here.

On PostgreSQL the statements go through SQLAlchemy unchanged (a network round trip dwarfs
the compilation there, and its driver takes several rows in one statement).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, CursorResult, Dialect
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler


@lru_cache(maxsize=256)
def _compiled(
    stmt: Executable, dialect: Dialect, keys: tuple[str, ...]
) -> tuple[str, tuple[str, ...] | None]:
    assert isinstance(stmt, ClauseElement)
    compiled = stmt.compile(dialect=dialect, column_keys=list(keys))
    assert isinstance(compiled, SQLCompiler)
    order = tuple(compiled.positiontup or ()) if compiled.positional else None
    return str(compiled), order


def execute(conn: Connection, stmt: Executable, params: dict[str, Any]) -> CursorResult[Any]:
    """`conn.execute(stmt, params)`; on SQLite through the SQL compiled once. On SQLite the
    result's `lastrowid` is the new row's key."""
    if conn.dialect.name != "sqlite":
        return conn.execute(stmt, params)
    sql, order = _compiled(stmt, conn.dialect, tuple(params))
    return conn.exec_driver_sql(sql, tuple(params[k] for k in order) if order else params)


def execute_many(conn: Connection, stmt: Executable, rows: list[dict[str, Any]]) -> None:
    """`conn.execute(stmt, rows)` for rows of the same keys; on SQLite through the SQL
    compiled once, one `executemany`."""
    if not rows:
        return
    if conn.dialect.name != "sqlite":
        conn.execute(stmt, rows)
        return
    keys = tuple(rows[0])
    execute_rows(conn, stmt, keys, [tuple(r[k] for k in keys) for r in rows])


def execute_rows(
    conn: Connection, stmt: Executable, keys: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    """`execute_many` for rows given as tuples of the values of `keys`, in that order (no
    dictionary made per row on SQLite)."""
    if not rows:
        return
    if conn.dialect.name != "sqlite":
        conn.execute(stmt, [dict(zip(keys, row, strict=True)) for row in rows])
        return
    sql, order = _compiled(stmt, conn.dialect, keys)
    if order is None:
        conn.exec_driver_sql(sql, [dict(zip(keys, row, strict=True)) for row in rows])
        return
    if order != keys:
        at = [keys.index(k) for k in order]
        rows = [tuple(row[i] for i in at) for row in rows]
    conn.exec_driver_sql(sql, rows)


def insert(conn: Connection, stmt: Executable, params: dict[str, Any]) -> int:
    """Runs a one-row INSERT; the new row's integer primary key."""
    result = execute(conn, stmt, params)
    if conn.dialect.name == "sqlite":
        return int(result.lastrowid)
    key = result.inserted_primary_key
    assert key is not None  # an INSERT of one row
    return int(key[0])
