"""What the database driver raises, in the catalogue's words.

Lock conflicts → ABORTED / CONCURRENT_MODIFICATION (the caller retries); an unreachable
database or a lost connection → UNAVAILABLE; a full disk → RESOURCE_EXHAUSTED /
STORAGE_FULL, logged at error level and counted (`agentmem_storage_full_total`): the
transaction was rolled back, reads go on, and writes succeed again once there is room.
Other driver errors (constraint violations, ...) are passed on unchanged. The driver's
message (which holds no bound values) goes to the log only. And a rollback that cannot fail
on a connection already lost.
"""

from __future__ import annotations

import contextlib
import logging
from typing import NoReturn

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, OperationalError, PendingRollbackError

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel import metrics

log = logging.getLogger("agentmem.runtime.storage")

# What a lost or broken database connection raises: a driver error (OperationalError,
# InterfaceError, ...) or, after one inside a savepoint, PendingRollbackError.
STORAGE = (DBAPIError, PendingRollbackError)


def rollback(conn: Connection) -> None:
    """Rolls back; on a connection already lost there is nothing to undo (the server
    dropped the transaction), and the error that lost it is the one to report."""
    with contextlib.suppress(*STORAGE):
        conn.rollback()


_CONFLICT = ("locked", "busy", "serializ", "deadlock")
_UNREACHABLE = (
    "unable to open",
    "disk i/o",
    "connection",
    "server closed",
    "terminating",
    "could not connect",
    "read-only",
)
SQLITE_FULL = 13  # the SQLite result code for "database or disk is full"
PG_DISK_FULL = "53100"  # SQLSTATE disk_full ("could not extend file", ...)


def raise_translated(e: Exception) -> NoReturn:
    translated = storage_error(e)
    if translated is e:
        raise e
    raise translated from e


def _dialect(e: DBAPIError) -> str:
    driver = type(e.orig).__module__ if e.orig is not None else ""
    return "sqlite" if "sqlite" in driver or driver.startswith("sqlean") else "postgresql"


def disk_full(e: DBAPIError) -> bool:
    """SQLite's SQLITE_FULL (also what a write that meets ENOSPC gives) or PostgreSQL's
    SQLSTATE 53100."""
    orig = e.orig
    if getattr(orig, "sqlite_errorcode", None) == SQLITE_FULL:
        return True
    if getattr(orig, "sqlstate", None) == PG_DISK_FULL:
        return True
    message = str(orig).lower() if orig is not None else ""
    return "database or disk is full" in message or "no space left on device" in message


def storage_error(e: Exception) -> Exception:
    if isinstance(e, PendingRollbackError) or (
        isinstance(e, DBAPIError) and e.connection_invalidated
    ):
        return AgentmemError(Reason.UNAVAILABLE, detail=type(e).__name__)
    if not isinstance(e, DBAPIError):
        return e
    message = str(e.orig) if e.orig is not None else type(e).__name__
    lowered = message.lower()
    if disk_full(e):
        metrics.STORAGE_FULL.labels(_dialect(e)).inc()
        log.error(
            "the database has no room left: writes are refused until there is",
            extra={"dialect": _dialect(e), "error": message[:200]},
        )
        return AgentmemError(Reason.STORAGE_FULL, detail=message[:200])
    if any(word in lowered for word in _CONFLICT):
        metrics.DB_CONFLICTS.labels(_dialect(e)).inc()
        return AgentmemError(Reason.CONCURRENT_MODIFICATION, detail=message[:200])
    if any(word in lowered for word in _UNREACHABLE):
        return AgentmemError(Reason.UNAVAILABLE, detail=message[:200])
    if isinstance(e, OperationalError):
        return AgentmemError(Reason.INTERNAL, detail=message[:200])
    return e
