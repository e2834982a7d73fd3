"""The soak's services, started as a user starts them: `agentmem runtime` and `agentmem
gateway` as processes (each `python -m runtime_svc` / `protocol_svc` underneath), on a
fresh database, each logging its JSON lines to a file that the soak reads afterwards.

Databases: SQLite in a data folder (`--data-dir`, as `agentmem up` does); a new database on
a PostgreSQL server (dropped afterwards); or a PostgreSQL with pgvector of the soak's own
(the `pgserver` package), stopped and deleted afterwards.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import servers

CLI = [sys.executable, "-m", "agentmem.cli.main"]


@dataclass(frozen=True)
class Tenant:
    name: str
    token: str


def tenants(n: int) -> list[Tenant]:
    return [Tenant(f"soak-{chr(97 + i)}", f"soak-token-{chr(97 + i)}") for i in range(n)]


@dataclass(frozen=True)
class Stack:
    address: str
    runtime_log: Path
    gateway_log: Path


@contextmanager
def database(tmp: Path, server: str | None, pgvector: bool) -> Iterator[str | None]:
    """None for SQLite (the runtime's data folder); else a PostgreSQL URL: a fresh database
    on `server`, or with `pgvector` a server of the soak's own."""
    if pgvector:
        with servers.pgvector_database(tmp) as url:
            yield url
        return
    if not server:
        yield None
        return
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    parsed = make_url(server)
    name = f"agentmem_soak_{secrets.token_hex(4)}"
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield parsed.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@contextmanager
def stack(
    tmp: Path, keys: list[Tenant], url: str | None, lexical: bool, name: str
) -> Iterator[Stack]:
    """The runtime and the gateway for `keys`' tenants on `url` (None: SQLite in a data
    folder under `tmp`), by meaning unless `lexical`; both stopped (SIGTERM) afterwards."""
    settings: dict[str, Any] = {
        "auth": {"api_keys": [servers.key(k.token, k.name, servers.ALL_SCOPES) for k in keys]},
        "events": {"subscriber_queue": 4096},
    }
    if url:
        settings["storage"] = {"url": url}
    config = tmp / f"{name}.yaml"
    config.write_text(json.dumps(settings))  # JSON is YAML
    env = {
        "AGENTMEM_INTERNAL__TOKEN": secrets.token_urlsafe(24),
        "AGENTMEM_LOGGING__LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        **({"AGENTMEM_RETRIEVAL__EMBEDDINGS": "none"} if lexical else {}),
    }
    logs = (tmp / f"{name}-runtime.log", tmp / f"{name}-gateway.log")
    where = [] if url else ["--data-dir", str(tmp / f"{name}-data")]
    runtime_args = [*where, "--log-file", str(logs[0])]
    procs = []
    try:
        runtime, rport = servers.start(
            [*CLI, "runtime", "--config", str(config), "--listen", "127.0.0.1:0", *runtime_args],
            tmp / f"{name}-runtime.port",
            env,
        )
        procs.append(runtime)
        gateway_args = ["--runtime", f"127.0.0.1:{rport}", "--log-file", str(logs[1])]
        gateway, gport = servers.start(
            [*CLI, "gateway", "--config", str(config), "--listen", "127.0.0.1:0", *gateway_args],
            tmp / f"{name}-gateway.port",
            env,
        )
        procs.append(gateway)
        yield Stack(f"127.0.0.1:{gport}", *logs)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=60)


def log_records(path: Path) -> list[dict[str, Any]]:
    """A service's JSON log lines (a line that is not JSON is kept as an error's text)."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = {"level": "error", "msg": line[:200]}
        out.append(record if isinstance(record, dict) else {"level": "error", "msg": line})
    return out
