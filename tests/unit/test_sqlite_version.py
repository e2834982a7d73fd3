"""The runtime refuses, at start, a SQLite too old for its statements, saying what to install
(rather than failing every search with a syntax error)."""

from __future__ import annotations

import pytest

from runtime_svc.storage.db import (
    SQLITE_MIN,
    UnsupportedSQLite,
    check_sqlite_version,
    sqlite_library,
)


def test_an_older_sqlite_is_refused_with_what_to_install():
    with pytest.raises(UnsupportedSQLite) as e:
        check_sqlite_version((3, 43, 2))
    assert "3.44.0 or later" in str(e.value) and "3.43.2" in str(e.value)
    assert "vectors" in str(e.value)


def test_the_sqlite_the_runtime_runs_with_here_is_recent_enough():
    check_sqlite_version(SQLITE_MIN)
    check_sqlite_version(sqlite_library().sqlite_version_info)
