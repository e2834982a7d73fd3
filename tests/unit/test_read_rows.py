"""Hot reads on SQLite run on the driver's own connection (`storage.read_rows`): they must stay
inside the read's one transaction, raise SQLAlchemy's errors, and go through SQLAlchemy
when tracing listens to the engine's cursor events."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, Table, bindparam, event, select
from sqlalchemy.exc import OperationalError

from agentmem_kernel.config import Storage
from runtime_svc.retrieval import source_checks
from runtime_svc.storage.db import open_database
from runtime_svc.storage.read_rows import UNION_MAX, driver_rows, one_of
from runtime_svc.storage.shown_sources import ShownSource

meta = MetaData()
items = Table("items", meta, Column("pk", Integer, primary_key=True))
missing = Table("missing", MetaData(), Column("pk", Integer, primary_key=True))


def _count(dialect: str):  # type: ignore[no-untyped-def]
    return select(items.c.pk).where(one_of(items.c.pk, "pks", dialect))


def _from_missing(dialect: str):  # type: ignore[no-untyped-def]
    return select(missing.c.pk).where(missing.c.pk == bindparam("pk"))


@pytest.fixture
def db(tmp_path: Path):  # type: ignore[no-untyped-def]
    database = open_database(Storage(url=f"sqlite:///{tmp_path / 'reads.db'}"))
    meta.create_all(database.writer)
    with database.writer.begin() as conn:
        conn.execute(items.insert(), [{"pk": 1}, {"pk": 2}])
    yield database
    database.dispose()


def _insert(db, pk: int) -> None:  # type: ignore[no-untyped-def]
    with db.writer.begin() as conn:
        conn.execute(items.insert(), {"pk": pk})


def test_a_read_begun_by_a_driver_read_sees_one_snapshot(db) -> None:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        first = driver_rows(conn, _count, {"pks": [1, 2, 3]})
        assert conn.in_transaction()
        _insert(db, 3)  # committed by another connection meanwhile
        again = driver_rows(conn, _count, {"pks": [1, 2, 3]})
        through_sqlalchemy = conn.execute(select(items.c.pk)).scalars().all()
        conn.rollback()
        after = driver_rows(conn, _count, {"pks": [1, 2, 3]})
    assert sorted(first) == sorted(again) == [(1,), (2,)]
    assert sorted(through_sqlalchemy) == [1, 2]
    assert sorted(after) == [(1,), (2,), (3,)]


def test_a_driver_read_joins_the_transaction_sqlalchemy_began(db) -> None:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn:
        assert conn.execute(select(items.c.pk)).scalars().all() == [1, 2]
        _insert(db, 3)
        assert driver_rows(conn, _count, {"pks": [3]}) == []
        conn.rollback()


def test_a_driver_error_is_raised_as_sqlalchemys(db) -> None:  # type: ignore[no-untyped-def]
    with db.reader.connect() as conn, pytest.raises(OperationalError, match="no such table"):
        driver_rows(conn, _from_missing, {"pk": 1})


def test_with_cursor_events_reads_go_through_sqlalchemy(db) -> None:  # type: ignore[no-untyped-def]
    seen: list[str] = []

    @event.listens_for(db.reader, "before_cursor_execute")
    def _seen(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        seen.append(statement)

    with db.reader.connect() as conn:
        assert sorted(driver_rows(conn, _count, {"pks": [1, 2]})) == [(1,), (2,)]
        conn.rollback()
    assert any("items" in s for s in seen)


def test_a_checked_source_row_reads_its_statements_columns_in_order():
    columns = [c.name for c in source_checks.SOURCE_COLUMNS]
    assert [f.name for f in dataclasses.fields(ShownSource)] == columns


@pytest.fixture
def hundred(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Items 1..100."""
    database = open_database(Storage(url=f"sqlite:///{tmp_path / 'list.db'}"))
    meta.create_all(database.writer)
    with database.writer.begin() as conn:
        conn.execute(items.insert(), [{"pk": pk} for pk in range(1, 101)])
    yield database
    database.dispose()


@contextmanager
def _traced(conn) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """The statements SQLite's own connection runs meanwhile."""
    statements: list[str] = []
    driver = conn.connection.driver_connection
    driver.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        driver.set_trace_callback(None)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pks=st.lists(st.integers(min_value=-3, max_value=105), max_size=2 * UNION_MAX)
    | st.lists(st.integers(min_value=1, max_value=UNION_MAX // 2), max_size=3 * UNION_MAX)
)
def test_a_list_parameter_matches_each_listed_row_once(hundred, pks: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Short lists are read as one lookup per value joined by UNION ALL, longer ones as an
    IN list: either way each row whose key is listed comes back once, duplicates and keys
    no row has included."""
    with hundred.reader.connect() as conn, _traced(conn) as statements:
        rows = driver_rows(conn, _count, {"pks": pks})
        conn.rollback()
    assert sorted(rows) == [(pk,) for pk in sorted(set(pks)) if 1 <= pk <= 100]
    read = [s for s in statements if "items" in s]
    assert len(read) == 1
    short = 0 < len(set(pks)) <= UNION_MAX
    assert ("UNION ALL" in read[0]) == (short and len(set(pks)) > 1)
    assert (" IN (" in read[0]) == (not short)


def test_a_list_parameter_is_refused_where_a_union_would_change_the_rows(db) -> None:  # type: ignore[no-untyped-def]
    def ordered(dialect: str):  # type: ignore[no-untyped-def]
        return _count(dialect).order_by(items.c.pk.desc()).limit(1)

    with db.reader.connect() as conn, pytest.raises(ValueError, match="plain filter"):
        driver_rows(conn, ordered, {"pks": [1, 2]})
