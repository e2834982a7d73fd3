"""Read statements compiled once, their rows as the driver's plain tuples (the search
index's hot reads: thousands of postings cost a fraction of result rows).

On SQLite, when nothing listens to the engine's cursor events (tracing is off), they run on
the driver's connection itself, inside the transaction SQLAlchemy began: a search reads
three or more of them, and SQLAlchemy's execution context costs more than most of them
(docs/benchmarks.md, design measurements). Driver errors are raised as SQLAlchemy's, as
through the connection."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import ColumnElement, Connection, Dialect, any_, bindparam
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

# A read statement, or a function of the dialect's name that makes it.
Statement = ClauseElement | Callable[[str], ClauseElement]
# The driver's rows: plain tuples in the statement's column order.
DriverRows = list[tuple[Any, ...]]


def one_of(column: ColumnElement[Any], name: str, dialect: str) -> ColumnElement[bool]:
    """`column` is one of the values of the list parameter `name`: on PostgreSQL one array
    parameter; on SQLite a list of parameters, as many as values (`driver_rows` expands
    it), which SQLite's planner looks up in the primary key value by value (one JSON
    parameter would make it scan every row of each key). A short list is read as the
    statement once per value, joined by UNION ALL (`UNION_MAX`), so a statement using it
    must be a plain filter: no ORDER BY, LIMIT, GROUP BY or DISTINCT, and one list."""
    if dialect == "postgresql":
        return column == any_(bindparam(name, type_=postgresql.ARRAY(column.type)))
    return column.in_(bindparam(name, expanding=True))


# What a statement with a list parameter must not have (see `one_of`).
_NOT_A_PLAIN_FILTER = re.compile(r"\b(ORDER BY|LIMIT|GROUP BY|DISTINCT|UNION)\b")


_PARENTHESISED = re.compile(r"\([^()]*\)")


def _top_level(sql: str) -> str:
    """The statement without what is in parentheses (its subqueries and calls: an ORDER BY
    inside one does not stop it being read once per value)."""
    while True:
        flat = _PARENTHESISED.sub("_", sql)
        if flat == sql:
            return sql
        sql = flat


@lru_cache(maxsize=64)
def _read_sql(
    make: Statement, dialect: Dialect
) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
    """A read statement (or a function of the dialect's name that makes it) compiled once
    for the dialect, its parameter order (for positional drivers) and its fixed
    parameters."""
    stmt = make if isinstance(make, ClauseElement) else make(dialect.name)
    compiled = stmt.compile(dialect=dialect)
    assert isinstance(compiled, SQLCompiler)
    order = tuple(compiled.positiontup or ()) if compiled.positional else None
    sql = str(compiled)
    if "__[POSTCOMPILE_" in sql and _NOT_A_PLAIN_FILTER.search(_top_level(sql)):
        raise ValueError("a statement with a list parameter must be a plain filter (one_of)")
    return sql, order, dict(compiled.params)


def driver_rows(conn: Connection, make: Statement, params: dict[str, Any]) -> DriverRows:
    """Rows of a read statement as the driver's plain tuples, in the connection's
    transaction: they cost a fraction of result rows when thousands of postings are read,
    and the statement is compiled once. List parameters (`one_of`) are expanded here for
    positional drivers."""
    sql, order, fixed = _read_sql(make, conn.dialect)
    values = {**fixed, **params}
    if order is None:
        result = conn.exec_driver_sql(sql, values)
    else:
        sql, args = _positional(sql, order, values)
        if on_driver(conn):
            return _sqlite_rows(conn, sql, tuple(args))
        result = conn.exec_driver_sql(sql, tuple(args))
    # Executed through the connection, so a driver error is SQLAlchemy's (a lost connection
    # is invalidated and reported as unavailable); the rows are the driver's own tuples.
    try:
        return cast(DriverRows, result.cursor.fetchall())
    finally:
        result.close()


# A list of at most this many values is looked up as one statement per value joined by
# UNION ALL, not as an `IN (?, ?, …)` list, for which SQLite builds an ephemeral index
# first, which costs more for a short list (docs/benchmarks.md, design measurements).
# Larger lists stay `IN` lists (SQLite allows 500 terms in a compound SELECT; the
# per-value statement cost would grow with the list).
UNION_MAX = 32


@lru_cache(maxsize=512)
def _expanded(sql: str, name: str, n: int, union: bool) -> str:
    """`sql` with its list parameter `name` made `n` values: as `n` statements joined by
    UNION ALL, or as an `IN` list. Made once per length, so a search passes the driver the
    same string object each time (its statement cache hashes the text)."""
    if union:
        return " UNION ALL ".join([sql.replace(f"IN (__[POSTCOMPILE_{name}])", "= ?")] * n)
    return sql.replace(f"__[POSTCOMPILE_{name}]", ", ".join("?" * n) or "NULL")


def _positional(
    sql: str, order: tuple[str, ...], values: dict[str, Any]
) -> tuple[str, list[object]]:
    """The SQL and its arguments in order, its list parameter (`one_of`) expanded."""
    lists = [k for k in order if isinstance(values[k], list)]
    # As with `IN`, a value listed twice matches its rows once.
    each = list(dict.fromkeys(values[lists[0]])) if len(lists) == 1 else []
    args: list[object] = []
    if 0 < len(each) <= UNION_MAX:
        name = lists[0]
        at, row = order.index(name), [values[k] for k in order]
        for v in each:  # each statement's arguments: the row, with its one value
            row[at] = v
            args.extend(row)
        return _expanded(sql, name, len(each), True), args
    for k in order:
        v = values[k]
        if isinstance(v, list):
            sql = _expanded(sql, k, len(v), False)
            args.extend(v)
        else:
            args.append(v)
    return sql, args


def on_driver(conn: Connection) -> bool:
    """Whether statements of `conn` may run on the driver's connection itself: SQLite, with
    nothing listening to the engine's cursor events (tracing is off)."""
    return conn.dialect.name == "sqlite" and not conn.dispatch.before_cursor_execute


def driver_execute(conn: Connection, sql: str, args: tuple[object, ...] = ()) -> Any:
    """`sql` on SQLite's own connection (see `on_driver`); a driver error is raised as
    SQLAlchemy's, as through the connection. Returns the driver's cursor (of whichever
    SQLite library `db.sqlite_module` chose, hence untyped)."""
    error = conn.dialect.loaded_dbapi.Error
    driver: Any = conn.connection.driver_connection
    try:
        return driver.execute(sql, args)
    except error as e:
        raise DBAPIError.instance(sql, args, e, error) from e


def _sqlite_rows(conn: Connection, sql: str, args: tuple[object, ...]) -> DriverRows:
    """`sql` on SQLite's own connection, in the transaction of `conn` (begun here if no
    statement began it yet, as SQLAlchemy would)."""
    if not conn.in_transaction():
        conn.begin()
    return cast(DriverRows, driver_execute(conn, sql, args).fetchall())
