"""Hot reads on SQLite run on the driver's own connection (`storage.read_rows`): they must stay
inside the read's one transaction, raise SQLAlchemy's errors, and go through SQLAlchemy
when tracing listens to the engine's cursor events."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, bindparam, event, select
from sqlalchemy.exc import OperationalError

from agentmem.core.config import Storage
from runtime_svc.storage import vector_search
from runtime_svc.storage.db import open_database
from runtime_svc.storage.read_rows import driver_rows, one_of

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


def test_a_checked_candidate_names_its_statements_columns_in_order():
    columns = [c.name for c in vector_search._checked_statement().selected_columns]
    assert list(vector_search.Checked._fields) == columns
