"""Read statements compiled once, their rows as the driver's plain tuples (the search
index's hot reads: thousands of postings cost a fraction of result rows)."""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import Connection, Dialect, any_, bindparam
from sqlalchemy.dialects import postgresql


def one_of(column, name: str, dialect: str):  # type: ignore[no-untyped-def]
    """`column` is one of the values of the list parameter `name`: on PostgreSQL one array
    parameter; on SQLite a list of parameters, as many as values (`driver_rows` expands
    it), which SQLite's planner looks up in the primary key value by value (one JSON
    parameter would make it scan every row of each key)."""
    if dialect == "postgresql":
        return column == any_(bindparam(name, type_=postgresql.ARRAY(column.type)))
    return column.in_(bindparam(name, expanding=True))


@lru_cache(maxsize=64)
def _read_sql(make, dialect: Dialect) -> tuple[str, tuple[str, ...] | None, dict]:  # type: ignore[no-untyped-def]
    """A read statement (or a function of the dialect's name that makes it) compiled once
    for the dialect, its parameter order (for positional drivers) and its fixed
    parameters."""
    stmt = make(dialect.name) if callable(make) else make
    compiled = stmt.compile(dialect=dialect)
    order = tuple(compiled.positiontup) if compiled.positional else None
    return str(compiled), order, dict(compiled.params)


def driver_rows(conn: Connection, make, params: dict) -> list[tuple]:  # type: ignore[no-untyped-def]
    """Rows of a read statement as the driver's plain tuples, on the connection's open
    transaction (begun by an earlier statement): they cost a fraction of result rows when
    thousands of postings are read, and the statement is compiled once. List parameters
    (`one_of`) are expanded here for positional drivers."""
    sql, order, fixed = _read_sql(make, conn.dialect)
    values = {**fixed, **params}
    if order is None:
        result = conn.exec_driver_sql(sql, values)
    else:
        args: list[object] = []
        for k in order:
            v = values[k]
            if isinstance(v, list):
                sql = sql.replace(f"__[POSTCOMPILE_{k}]", ", ".join("?" * len(v)) or "NULL")
                args.extend(v)
            else:
                args.append(v)
        result = conn.exec_driver_sql(sql, tuple(args))
    # Executed through the connection, so a driver error is SQLAlchemy's (a lost connection
    # is invalidated and reported as unavailable); the rows are the driver's own tuples.
    try:
        return result.cursor.fetchall()  # type: ignore[union-attr]
    finally:
        result.close()
