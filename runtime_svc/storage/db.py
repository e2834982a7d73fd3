"""Engines for the configured database.

SQLite: WAL journal, a busy timeout, foreign keys on, and writes that take the write lock at
BEGIN (`BEGIN IMMEDIATE`) so read-check-write sequences never deadlock or lose an update.
Reads use a separate engine with deferred transactions so they never wait for writers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

from agentmem_kernel.config import Storage
from runtime_svc.storage import read_rows, sqlite_vectors


@dataclass(frozen=True)
class Database:
    writer: Engine
    reader: Engine
    # SQLite: held by whoever checkpoints the write-ahead log on purpose (`wal_checkpoints`,
    # `scrub`); a checkpoint finds another one running busy at once, without waiting.
    checkpoint_turn: threading.Lock = field(default_factory=threading.Lock, compare=False)

    @property
    def dialect(self) -> str:
        return self.writer.dialect.name

    def dispose(self) -> None:
        self.writer.dispose()
        if self.reader is not self.writer:
            self.reader.dispose()


# The oldest SQLite the runtime's statements run on: a conversation's whole stored form is
# joined in order by an aggregate's ORDER BY (3.44), FTS5 secure-delete needs 3.42.
SQLITE_MIN = (3, 44, 0)


class UnsupportedSQLite(RuntimeError):
    """The SQLite library found is older than `SQLITE_MIN` (the message says what to do)."""


def check_sqlite_version(found: tuple[int, ...]) -> None:
    if tuple(found) < SQLITE_MIN:
        need, have = ".".join(map(str, SQLITE_MIN)), ".".join(map(str, found))
        raise UnsupportedSQLite(
            f"SQLite {need} or later is needed, this Python's is {have}: install the "
            "`vectors` extra (sqlean.py), or run on Linux x86-64 (pysqlite3-binary)"
        )


def open_database(
    storage: Storage, *, vectors: bool = False, checkpoints_apart: bool = False
) -> Database:
    """With `vectors`, SQLite connections load sqlite-vec (see `sqlite_vectors`). With
    `checkpoints_apart`, a commit checkpoints the write-ahead log only past
    `CHECKPOINT_APART_PAGES`: a `wal_checkpoints.WalCheckpointer` does it. SQLite older
    than `SQLITE_MIN`: `UnsupportedSQLite`."""
    url = make_url(storage.url)
    if url.get_backend_name() != "sqlite":
        writer = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
        event.listen(writer, "connect", _custom_plans)
        reader = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
        return Database(writer=writer, reader=reader)
    check_sqlite_version(sqlite_library().sqlite_version_info)
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    return Database(
        writer=_sqlite_engine(
            storage,
            begin="BEGIN IMMEDIATE",
            vectors=vectors,
            cache_kib=WRITER_CACHE_KIB,
            autocheckpoint=CHECKPOINT_APART_PAGES if checkpoints_apart else None,
        ),
        reader=_sqlite_engine(storage, begin="BEGIN", vectors=vectors),
    )


def _custom_plans(dbapi_connection: Any, _record: Any) -> None:
    """PostgreSQL writer connections plan each statement for its values. The driver prepares
    a statement run five times on a connection, and the server may then keep one generic
    plan for it for the connection's life, chosen while the tables were small or had no
    statistics (a new database filling up): a write's lookup of a source by pk then read
    every row (loading 10,000 memories: 97 s, against 11 s planned each time). Reads keep
    the driver's prepared plans (planning each cost a search 1.3-2.4 ms); their hot
    statements are shaped so that any plan looks rows up by key (`source_rows`)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("SET plan_cache_mode = force_custom_plan")
    cursor.close()
    dbapi_connection.commit()


def sqlite_module() -> ModuleType | None:
    """The one SQLite library the runtime uses: the `pysqlite3-binary` build where it is
    installed (a current SQLite, which loads extensions such
    as sqlite-vec), else `sqlean.py` (the `vectors` extra, for platforms without that
    wheel), else Python's own (None). One library per process: two do not see each other's
    locks."""
    try:
        import pysqlite3.dbapi2 as module
    except ImportError:
        try:
            import sqlean as module
        except ImportError:
            return None
    return cast(ModuleType, module)


def sqlite_library() -> ModuleType:
    """The DB-API module of the SQLite agentmem runs with: `sqlite_module`, else Python's own."""
    import sqlite3

    return sqlite_module() or sqlite3


def sqlite_connect(path: str | Path, **kwargs: Any) -> Any:
    """A DB-API connection with the SQLite build agentmem runs with. Within one process, two
    SQLite libraries do not see each other's locks (POSIX locks are per process; each
    library tracks its own), so anything opening the runtime's file in its process (tools,
    tests) must use this one."""
    return sqlite_library().connect(str(path), **kwargs)


def sqlite_engine(url: str, **kwargs: Any) -> Engine:
    """An SQLAlchemy engine on the SQLite build agentmem runs with (also for tools/tests)."""
    module = sqlite_module()
    if module is not None:
        kwargs["module"] = module
    return create_engine(url, **kwargs)


# The writer's page cache. Every insert updates B-trees at places spread over the whole file
# (the search index by word, the sources by id): with SQLite's default 2 MiB most of those
# pages were read again from the OS on each insert. Pages are allocated as they are used,
# and writes are serialized, so one or two writer connections hold such a cache.
WRITER_CACHE_KIB = 64 * 1024
# The page cache of the reader connection the event loop's thread keeps between reads
# (`UnitOfWork.keep_reader`): the sources a search checks lie on pages spread over the whole
# table (a conversation's row fills most of a page), and the default 2 MiB held few of
# them. One connection, so one such cache; pages are allocated as they are used (its gain:
# docs/benchmarks.md, design measurements).
KEPT_READER_CACHE_KIB = 64 * 1024
# A writer connection's own `wal_autocheckpoint` when a thread of its own checkpoints the log
# (`wal_checkpoints`): only if that thread fell behind (80 MB of 4 KiB pages).
CHECKPOINT_APART_PAGES = 20_000


def set_page_cache(dbapi_connection: Any, kib: int) -> None:
    """SQLite's page cache of one DB-API connection (outside any transaction)."""
    dbapi_connection.execute(f"PRAGMA cache_size=-{int(kib)}")


def _sqlite_engine(
    storage: Storage,
    *,
    begin: str,
    vectors: bool,
    cache_kib: int | None = None,
    autocheckpoint: int | None = None,
) -> Engine:
    engine = sqlite_engine(
        storage.url,
        connect_args={"timeout": storage.busy_timeout_ms / 1000, "check_same_thread": False},
        pool_size=8,
        max_overflow=8,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: object) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite would defer it).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(storage.busy_timeout_ms)}")
        cursor.execute(f"PRAGMA synchronous={storage.sqlite_synchronous}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Erasure is physical: deleted content is overwritten, not left in free pages.
        cursor.execute("PRAGMA secure_delete=ON")
        if autocheckpoint is not None:
            cursor.execute(f"PRAGMA wal_autocheckpoint={int(autocheckpoint)}")
        cursor.close()
        if cache_kib:
            set_page_cache(dbapi_connection, cache_kib)
        if vectors:
            sqlite_vectors.load(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # On the driver's connection unless tracing listens (a span per BEGIN): cheaper than
        # through SQLAlchemy's execution context (docs/benchmarks.md, design measurements).
        if read_rows.on_driver(conn):
            read_rows.driver_execute(conn, begin)
        else:
            conn.exec_driver_sql(begin)

    return engine
