"""What a database error means to a caller: lock conflicts are CONCURRENT_MODIFICATION, an
unreachable database or a lost connection is UNAVAILABLE (`translate`); and a rollback that
cannot fail on a connection already lost."""

from __future__ import annotations

import contextlib
from typing import NoReturn

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, OperationalError, PendingRollbackError

from agentmem.core import metrics
from agentmem.core.errors import AgentmemError, Reason

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
    "no space",
)


def raise_translated(e: Exception) -> NoReturn:
    translated = storage_error(e)
    if translated is e:
        raise e
    raise translated from e


def storage_error(e: Exception) -> Exception:
    """Lock conflicts → CONCURRENT_MODIFICATION; an unreachable database or a lost
    connection → UNAVAILABLE; other driver errors (constraint violations, ...) are passed
    on unchanged. The driver's message (which holds no bound values) goes to the log only."""
    if isinstance(e, PendingRollbackError) or (
        isinstance(e, DBAPIError) and e.connection_invalidated
    ):
        return AgentmemError(Reason.UNAVAILABLE, detail=type(e).__name__)
    if not isinstance(e, DBAPIError):
        return e
    message = str(e.orig) if e.orig is not None else type(e).__name__
    lowered = message.lower()
    if any(word in lowered for word in _CONFLICT):
        driver = type(e.orig).__module__ if e.orig is not None else ""
        metrics.DB_CONFLICTS.labels("sqlite" if driver.startswith("sqlite") else "postgresql").inc()
        return AgentmemError(Reason.CONCURRENT_MODIFICATION, detail=message[:200])
    if any(word in lowered for word in _UNREACHABLE):
        return AgentmemError(Reason.UNAVAILABLE, detail=message[:200])
    if isinstance(e, OperationalError):
        return AgentmemError(Reason.INTERNAL, detail=message[:200])
    return e
