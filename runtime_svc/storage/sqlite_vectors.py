"""sqlite-vec for SQLite connections, when hybrid retrieval is on.

Loading an extension needs a Python whose sqlite3 module allows it; builds without
`--enable-loadable-sqlite-extensions` (some pyenv and python.org builds) get the `sqlean.py`
driver instead (a drop-in sqlite3 with a current SQLite), from the `vectors` extra. Nothing
here is imported while retrieval.embeddings is none.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

log = logging.getLogger("agentmem.runtime.vectors")


def _module() -> Any:
    """The DB-API module to use: the standard one if it can load extensions."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean  # type: ignore[import-not-found]
    except ImportError:
        return sqlite3  # `load` then fails, and the runtime runs lexical-only
    return sqlean


def engine_args() -> dict[str, Any]:
    module = _module()
    return {} if module is sqlite3 else {"module": module}


def load(dbapi_connection: Any) -> None:
    """Loads sqlite-vec into the connection; a failure leaves it without vector functions
    (the runtime checks at start and then runs lexical-only)."""
    try:
        import sqlite_vec

        dbapi_connection.enable_load_extension(True)
        sqlite_vec.load(dbapi_connection)
        dbapi_connection.enable_load_extension(False)
    except Exception as e:  # ImportError, no extension loading, or the driver's own error
        log.debug("sqlite-vec not loaded: %s", type(e).__name__)
