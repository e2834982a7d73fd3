"""Start the services (and the echo floor) as processes for the benchmarks."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start(
    args: list[str], port_file: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    port_file.unlink(missing_ok=True)  # a port file of an earlier run is not this one's
    proc = subprocess.Popen(
        [*args, "--port-file", str(port_file)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600  # importing torch alone can take minutes on a busy machine
    while not (port_file.exists() and port_file.read_text().strip()):  # written, not just made
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{args} did not start")
        time.sleep(0.02)
    return proc, int(port_file.read_text())


def key(token: str, tenant: str, scopes: list[str]) -> dict:
    return {
        "principal": f"bench-{tenant}",
        "tenant": tenant,
        "kind": "user",
        "scopes": scopes,
        "sha256": hashlib.sha256(token.encode()).hexdigest(),
    }


ALL_SCOPES = [
    "memory.read",
    "memory.write",
    "memory.content.read",
    "memory.policy",
    "memory.review",
    "memory.admit",
    "memory.admin",
]


POSTGRES = os.environ.get(
    "AGENTMEM_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def pgvector_database(tmp: Path):
    """A PostgreSQL server with pgvector of the bench's own (the `pgserver` package, run
    under the temporary folder), as a URL; stopped and deleted afterwards."""
    import pgserver  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from sqlalchemy.engine import make_url

    base = tmp / "pgvector"
    base.mkdir(exist_ok=True)
    tmp.chmod(0o755)  # run as root, pgserver runs the server as a user of its own
    base.chmod(0o755)
    server = pgserver.get_server(str(base / "data"), cleanup_mode="delete")
    try:
        url = make_url(server.get_uri()).set(drivername="postgresql+psycopg")
        yield url.render_as_string(hide_password=False)
    finally:
        server.cleanup()


@contextmanager
def database(tmp: Path, name: str, postgres: bool = False):
    """A fresh database for one part of the benchmark; yields its URL. On PostgreSQL (the
    server at AGENTMEM_BENCH_DATABASE_URL) a new database, dropped afterwards."""
    if not postgres:
        (tmp / name).mkdir(exist_ok=True)
        yield f"sqlite:///{tmp / name / 'agentmem.db'}"
        return
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    server = make_url(POSTGRES)
    db_name = f"agentmem_bench_{name.lower().replace('-', '_')}_{os.getpid()}"
    admin = create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        conn.exec_driver_sql(f'CREATE DATABASE "{db_name}"')
    try:
        yield server.set(database=db_name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        admin.dispose()


@contextmanager
def agentmem(
    tmp: Path,
    keys: list[dict],
    data_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
    storage_url: str | None = None,
):
    """Runtime and gateway as two processes; yields the gateway address. The runtime's
    database is `storage_url` if given, else SQLite in `data_dir`."""
    # Words only unless the bench asks for meaning (the default loads a model): the lexical
    # figures stay comparable with their floors.
    env = {
        "AGENTMEM_INTERNAL__TOKEN": "bench-internal",
        "AGENTMEM_RETRIEVAL__EMBEDDINGS": "none",
        **(extra_env or {}),
    }
    tag = str(time.monotonic_ns())
    config = tmp / f"config-{tag}.yaml"
    settings: dict = {"auth": {"api_keys": keys}}
    if storage_url:
        settings["storage"] = {"url": storage_url}
    config.write_text(json.dumps(settings))  # JSON is YAML
    where = [] if storage_url else ["--data-dir", str(data_dir or tmp / "data")]
    cli = [sys.executable, "-m", "agentmem.cli.main"]
    procs = []
    try:
        runtime, rport = start(
            [
                *cli,
                "runtime",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                *where,
            ],
            tmp / f"r{tag}",
            env,
        )
        procs.append(runtime)
        gateway, gport = start(
            [
                *cli,
                "gateway",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                "--runtime",
                f"127.0.0.1:{rport}",
            ],
            tmp / f"g{tag}",
            env,
        )
        procs.append(gateway)
        yield f"127.0.0.1:{gport}"
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=60)


@contextmanager
def echo_floor(tmp: Path):
    """A bare two-hop gRPC echo, as processes; yields its front address."""
    py = sys.executable
    procs = []
    try:
        back, bport = start([py, "bench/echo.py", "back"], tmp / "echo-b")
        procs.append(back)
        front, fport = start(
            [py, "bench/echo.py", "front", "--backend", f"127.0.0.1:{bport}"], tmp / "echo-f"
        )
        procs.append(front)
        yield f"127.0.0.1:{fport}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
