"""Real servers for tests: in-process on a background event loop, or as processes.

In-process stacks run the real runtime and gateway (`app.start`) on ephemeral ports, each
with its own SQLite file, so every test gets fresh state through real gRPC.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agentmem.client import NO_RETRY, Client
from agentmem.client.errors import from_grpc_error
from agentmem_kernel import config
from tests import layers

ROOT = Path(__file__).resolve().parent.parent
INTERNAL_TOKEN = "test-internal-credential"
# Test clients accept every experimental capability unless a test says otherwise.
EXPERIMENTAL = ("foreign_sources",)


@dataclass(frozen=True)
class Key:
    token: str
    principal: str
    tenant: str
    scopes: tuple[str, ...]
    kind: str = "user"
    trusted_save_intents: tuple[str, ...] | None = None  # None: the default (all)

    def config(self) -> dict[str, Any]:
        trusted = self.trusted_save_intents
        return {
            "principal": self.principal,
            "tenant": self.tenant,
            "kind": self.kind,
            "scopes": list(self.scopes),
            "sha256": hashlib.sha256(self.token.encode()).hexdigest(),
            **({} if trusted is None else {"trusted_save_intents": list(trusted)}),
        }


ADMIN_A = Key("tok-admin-a", "alice", "tenant-a", config.SCOPES)
READER_A = Key("tok-reader-a", "reader", "tenant-a", ("memory.read",))
ADMIN_B = Key("tok-admin-b", "bob", "tenant-b", config.SCOPES)
KEYS = (ADMIN_A, READER_A, ADMIN_B)


# PostgreSQL test databases: their names start with this, and each process drops at exit
# (also when a test failed, or on SIGTERM) every one it made and has not dropped yet.
TEST_DATABASE_PREFIX = "agentmem_test_"
_CREATED: set[str] = set()


def database_url(db_path: Path) -> str:
    """A fresh database: a SQLite file, or with AGENTMEM_TEST_DATABASE_URL (a PostgreSQL
    server URL) a new database on that server."""
    server = os.environ.get("AGENTMEM_TEST_DATABASE_URL")
    if not server:
        return f"sqlite:///{db_path}"
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    _drop_at_exit()
    name = f"{TEST_DATABASE_PREFIX}{secrets.token_hex(6)}"
    url = make_url(server).set(database=name).render_as_string(hide_password=False)
    _CREATED.add(url)  # before it exists: an interrupt during CREATE still drops it
    admin = create_engine(make_url(server).set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        admin.dispose()
    return url


def drop_database(url: str) -> None:
    """Drops a PostgreSQL test database made by `database_url` (SQLite files go with tmp)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return
    admin = create_engine(
        parsed.set(database="postgres"),
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": 10},
    )
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)')
    finally:
        admin.dispose()
    _CREATED.discard(url)


def drop_created_databases() -> None:
    """Drops every database this process made and has not dropped (best effort: a server
    gone already took its databases with it)."""
    for url in list(_CREATED):
        with contextlib.suppress(Exception):
            drop_database(url)


_EXIT_HOOKED = False


def _drop_at_exit() -> None:
    """Once: at exit the process drops what it made; SIGTERM becomes KeyboardInterrupt, so
    that a terminated test run unwinds (fixtures' teardowns included) and exits."""
    global _EXIT_HOOKED
    if _EXIT_HOOKED:
        return
    _EXIT_HOOKED = True
    atexit.register(drop_created_databases)
    if threading.current_thread() is threading.main_thread() and signal.getsignal(
        signal.SIGTERM
    ) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


# Retrieval by meaning is on by default and loads a model (seconds); tests that are not
# about meaning search by words only. The first-hour and hybrid tests run the default.
LEXICAL_ONLY = {"retrieval.embeddings": "none"}
SERVER_ENV = {"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"}  # the same, for servers as processes


def base_settings(db_path: Path, **overrides: Any) -> dict[str, Any]:
    return {
        **LEXICAL_ONLY,
        "storage.url": database_url(db_path),
        "auth.api_keys": [k.config() for k in KEYS],
        "internal.token": INTERNAL_TOKEN,
        "gateway.grace": 2.0,
        "runtime.grace": 2.0,
        "events.poll_interval": 0.5,
        **overrides,
    }


class LoopThread:
    """An asyncio loop in a daemon thread, for servers the test talks to synchronously."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)


@dataclass
class Stack:
    """A runtime and a gateway, in process."""

    loop: LoopThread
    settings: config.Settings
    db_path: Path
    runtime: Any = None
    gateway: Any = None
    clients: list[Client] = field(default_factory=list)
    _engine: Any = None  # for `sql`, made on first use
    span_exporter: Any = None  # receives both services' spans (tracing tests)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.gateway.port}"

    @property
    def runtime_address(self) -> str:
        return f"127.0.0.1:{self.runtime.port}"

    def start(self) -> Stack:
        layers.no_server_here("a stack (runtime and gateway)")
        from protocol_svc import app as gateway_app
        from runtime_svc import app as runtime_app

        self.runtime = self.loop.run(
            runtime_app.start(self.settings, listen="127.0.0.1:0", span_exporter=self.span_exporter)
        )
        self.gateway = self.loop.run(
            gateway_app.start(
                self.settings,
                listen="127.0.0.1:0",
                runtime_address=self.runtime_address,
                span_exporter=self.span_exporter,
            )
        )
        return self

    def sql(self, statement: str, **params: Any) -> list[tuple]:
        """Runs SQL on the stack's database directly (to tamper, or to inspect)."""
        from sqlalchemy import create_engine, text

        from runtime_svc.storage.db import sqlite_engine

        if self._engine is None:
            url = self.settings.storage.url
            self._engine = sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
        with self._engine.begin() as conn:
            result = conn.execute(text(statement), params)
            return [tuple(r) for r in result] if result.returns_rows else []

    def client(
        self,
        key: Key | None = None,
        token: str | None = None,
        experimental: tuple[str, ...] = EXPERIMENTAL,
        **kwargs: Any,
    ) -> Client:
        """The typed client as `key` (default ADMIN_A), opted in to the experimental
        capabilities and without retries unless told otherwise."""
        kwargs.setdefault("retry", NO_RETRY)
        c = Client(
            self.address,
            token if token is not None else (key or ADMIN_A).token,
            experimental=experimental,
            **kwargs,
        )
        self.clients.append(c)
        return c

    def stop(self, drop: bool = True) -> None:
        """Stops both services; `drop=False` keeps a PostgreSQL test database for a next
        stack on the same data."""
        try:
            for c in self.clients:
                c.close()
            if self._engine is not None:
                self._engine.dispose()
            self.clients = []
            for served in (self.gateway, self.runtime):
                if served is not None:
                    self.loop.run(served.stop())
            self.gateway = self.runtime = None
        finally:
            if drop:  # also when stopping failed
                drop_database(self.settings.storage.url)


def words_held_in_memory(mirrors: list[Any]) -> set[str]:
    """Every word that some runtimes' postings held in memory (`retrieval.held.held_postings`;
    a stack's are `stack.runtime.mirrors`) hold of any tenant."""
    return {word for m in mirrors for held in list(m._held.values()) for word in list(held.words)}


def reason(err: grpc.RpcError) -> str | None:
    return from_grpc_error(err).reason


def metadata_of(err: grpc.RpcError) -> dict[str, str]:
    return from_grpc_error(err).metadata


def health(address: str, service: str = "") -> int:
    with grpc.insecure_channel(address) as ch:
        return (
            health_pb2_grpc.HealthStub(ch)
            .Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            .status
        )


def wait_until(predicate: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
    """Polls `predicate` until it returns something truthy (a condition, with a deadline);
    that value. For state only visible from outside (a file, a log, a count the service
    reports), where no event can be awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out waiting for {what or predicate}")
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A service started as its own process with `agentmem runtime|gateway|up`."""

    def __init__(self, args: list[str], env: dict[str, str], tmp: Path, name: str) -> None:
        layers.no_server_here(f"a service process ({name})")
        self.port_file = tmp / f"{name}.{time.monotonic_ns()}.port"
        self.log = tmp / f"{name}.log"
        self._log_handle = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentmem.cli.main", *args, "--port-file", str(self.port_file)],
            env={**os.environ, **SERVER_ENV, **env},
            stdout=subprocess.PIPE,
            stderr=self._log_handle,
            cwd=ROOT,
        )
        self.port = self._wait_port()

    def _wait_port(self, timeout: float = 60) -> int:
        def written() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"process exited: {self.log.read_text()[-2000:]}")
            return self.port_file.exists()

        wait_until(written, timeout, "the service's port file")
        return int(self.port_file.read_text())

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.wait()

    def kill(self) -> None:
        self.proc.kill()
        self.wait()

    def wait(self) -> int:
        code = self.proc.wait(timeout=30)
        self._log_handle.close()
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if not self._log_handle.closed:
            self._log_handle.close()
