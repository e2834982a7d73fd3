"""Alembic environment for the runtime's schema (SQLite and PostgreSQL)."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, create_engine

from runtime_svc.storage.db import sqlite_engine
from runtime_svc.storage.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url")
    if url:
        return url
    from agentmem_kernel import config as agentmem_config

    return agentmem_config.load(os.environ.get("AGENTMEM_CONFIG")).storage.url


# The full-text index is created by hand in the migrations (a virtual table on SQLite)
# and has no model: autogenerate leaves it alone.
UNMODELLED_PREFIXES = ("memory_index", "fact_index")


def _include_name(name: str | None, type_: str, parent_names: object) -> bool:
    if type_ == "index" and name and name.endswith("_fts"):  # PostgreSQL full-text indexes
        return False
    return not (type_ == "table" and name and name.startswith(UNMODELLED_PREFIXES))


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=_include_name,
    )


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = _url()
    engine = sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
    with engine.connect() as conn:
        _configure(conn)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
