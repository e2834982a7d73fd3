"""Test databases that earlier runs left on a shared PostgreSQL server (a run killed before
it could drop them): dropped when the name marks them as this suite's, nobody is connected,
and they are older than `OLDER_THAN_S` — other runs on the same server may be using
younger ones. A database someone connects to meanwhile is not dropped (no FORCE)."""

from __future__ import annotations

import contextlib

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.harness import TEST_DATABASE_PREFIX

OLDER_THAN_S = 30 * 60
# Age from the database directory's PG_VERSION file (written at CREATE DATABASE).
_CANDIDATES = text(
    """
    SELECT d.datname FROM pg_database d
    WHERE d.datname LIKE :pattern
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datid = d.oid)
      AND (pg_stat_file('base/' || d.oid || '/PG_VERSION')).modification
          < now() - make_interval(secs => :older_than)
    ORDER BY d.datname
    """
)


def drop_leftovers(
    server_url: str, older_than_s: float = OLDER_THAN_S, prefix: str = TEST_DATABASE_PREFIX
) -> list[str]:
    """The names of the leftover databases dropped."""
    pattern = prefix.replace("_", r"\_") + "%"
    admin = create_engine(
        make_url(server_url).set(database="postgres"),
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": 10},
    )
    dropped = []
    try:
        with admin.connect() as conn:
            names = conn.execute(
                _CANDIDATES, {"pattern": pattern, "older_than": older_than_s}
            ).scalars()
            for name in list(names):
                with contextlib.suppress(Exception):  # someone connected meanwhile
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
                    dropped.append(name)
    finally:
        admin.dispose()
    return dropped
