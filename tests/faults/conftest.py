"""The fault suite: the services as real processes (or in process, where a fault is in the
database), on SQLite or on the PostgreSQL server named by AGENTMEM_TEST_DATABASE_URL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness import (  # noqa: F401  (wait_until: the fault tests import it from here)
    INTERNAL_TOKEN,
    KEYS,
    Process,
    database_url,
    drop_database,
    wait_until,
)


def log_count(process: Process, needle: str) -> int:
    return process.log.read_text(errors="replace").count(needle)


@contextlib.contextmanager
def write_lock(url: str, tenant: str = "tenant-a") -> Iterator[None]:
    """Holds the tenant's write lock from outside (SQLite: the database's write lock;
    PostgreSQL: the tenant's state row), so that writes stay in flight."""
    from sqlalchemy import create_engine, text

    from runtime_svc.storage.db import sqlite_engine

    engine = sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
    try:
        with engine.connect() as conn:
            if url.startswith("sqlite"):
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                conn.execute(
                    text("SELECT 1 FROM tenant_state WHERE tenant_id = :t FOR UPDATE"),
                    {"t": tenant},
                )
            try:
                yield
            finally:
                conn.rollback()
    finally:
        engine.dispose()


class Services:
    """Runtime and gateway processes sharing one config file and one database."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.url = database_url(tmp / "agentmem.db")
        self.started: list[Process] = []
        self.config = tmp / "agentmem.yaml"
        self.configure()

    def configure(self, **sections: dict[str, Any]) -> None:
        data: dict[str, Any] = {
            "auth": {"api_keys": [k.config() for k in KEYS]},
            "storage": {"url": self.url},
            "gateway": {"grace": 5.0},
            "runtime": {"grace": 5.0},
            "events": {"poll_interval": 0.5},
        }
        for name, values in sections.items():
            data[name] = {**data.get(name, {}), **values}
        self.config.write_text(yaml.safe_dump(data))

    @property
    def sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    def runtime(self, port: int = 0) -> Process:
        p = Process(
            ["runtime", "--config", str(self.config), "--listen", f"127.0.0.1:{port}"],
            {"AGENTMEM_INTERNAL__TOKEN": INTERNAL_TOKEN},
            self.tmp,
            "runtime",
        )
        self.started.append(p)
        return p

    def gateway(self, runtime_address: str, port: int = 0) -> Process:
        p = Process(
            [
                "gateway",
                "--config",
                str(self.config),
                "--listen",
                f"127.0.0.1:{port}",
                "--runtime",
                runtime_address,
            ],
            {"AGENTMEM_INTERNAL__TOKEN": INTERNAL_TOKEN},
            self.tmp,
            "gateway",
        )
        self.started.append(p)
        return p

    def sql(self, statement: str) -> list[tuple]:
        from sqlalchemy import create_engine, text

        engine = create_engine(self.url)
        try:
            with engine.connect() as conn:
                return [tuple(r) for r in conn.execute(text(statement))]
        finally:
            engine.dispose()

    def write_lock(self, tenant: str = "tenant-a") -> contextlib.AbstractContextManager[None]:
        return write_lock(self.url, tenant)

    def stop(self) -> None:
        try:
            for p in self.started:
                p.stop()
        finally:
            drop_database(self.url)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    s = Services(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def provider() -> Iterator[dict[str, Any]]:
    """An identity provider: RSA and EC signing keys, and its key set on loopback."""
    from tests.faults.identity import provider_keys

    keys = provider_keys()
    yield keys
    keys["jwks"].close()
