"""sqlite-vec for SQLite connections, when hybrid retrieval is on.

Loading an extension needs a SQLite library that allows it: the runtime's own choice
(`storage.db.sqlite_module`: pysqlite3-binary, else sqlean.py) does. Nothing here is
imported while retrieval.embeddings is none.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("agentmem.runtime.vectors")


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
