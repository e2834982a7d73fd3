"""`agentmem up | gateway | runtime`: run the services."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import make_url

from agentmem.cli import SubParsers, data_lock, dev_credential, supervisor
from agentmem.core import config, listen, logs, private_files

if TYPE_CHECKING:
    from agentmem.core.serving import Served

DEV_TENANT = "dev"
DEV_PRINCIPAL = "dev"
LOG_FILE_HELP = "append the JSON log lines here; only warnings and errors go to stderr"
# `agentmem up` keeps its services' logs here, in the data directory.
LOG_DIR = "logs"


def add_parsers(sub: SubParsers) -> None:
    up = sub.add_parser("up", help="run the gateway and the runtime together (SQLite)")
    up.add_argument("--config", help="YAML config file (default: built-in defaults)")
    up.add_argument("--listen", default="127.0.0.1:50051", help="gateway address (HOST:PORT)")
    up.add_argument(
        "--data-dir",
        help="where the SQLite database lives (default: storage.url from --config, else ./data)",
    )
    up.add_argument("--port-file", help="write the gateway's bound port here once serving")
    up.add_argument("--console", metavar="HOST:PORT", help="also serve the web console here")
    up.add_argument(
        "--rotate-dev-token",
        action="store_true",
        help="mint a new dev credential instead of reusing the one in the data directory",
    )
    up.set_defaults(func=cmd_up)

    gw = sub.add_parser("gateway", help="run the gateway (protocol_svc) alone")
    gw.add_argument("--config", help="YAML config file (default: built-in defaults)")
    gw.add_argument("--listen", help="overrides gateway.listen")
    gw.add_argument("--runtime", help="runtime address; overrides gateway.runtime_address")
    gw.add_argument("--port-file", help="write the bound port here once serving")
    gw.add_argument("--log-file", help=LOG_FILE_HELP)
    gw.set_defaults(func=cmd_gateway)

    rt = sub.add_parser("runtime", help="run the memory runtime (runtime_svc) alone")
    rt.add_argument("--config", help="YAML config file (default: built-in defaults)")
    rt.add_argument("--listen", help="overrides runtime.listen")
    rt.add_argument("--data-dir", help="put the SQLite database here (overrides storage.url)")
    rt.add_argument("--port-file", help="write the bound port here once serving")
    rt.add_argument("--log-file", help=LOG_FILE_HELP)
    rt.set_defaults(func=cmd_runtime)


def _load(path: str | None, overrides: dict[str, Any] | None = None) -> config.Settings:
    try:
        return config.load(path, overrides)
    except config.ConfigError as e:
        raise SystemExit(f"agentmem: {e}") from None


def sqlite_url(data_dir: str) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'agentmem.db'}"


def cmd_runtime(args: argparse.Namespace) -> int:
    from runtime_svc import app

    private_files.restrict()
    overrides = {"storage.url": sqlite_url(args.data_dir)} if args.data_dir else None
    settings = _load(args.config, overrides)
    r = settings.runtime
    _ensure_free("runtime", args.listen or r.listen, r.health_listen, r.metrics_listen)
    logs.configure("runtime", settings.logging.level, args.log_file)
    return _serve(app.start(settings, listen=args.listen), "runtime", args.port_file)


def cmd_gateway(args: argparse.Namespace) -> int:
    from protocol_svc import app

    private_files.restrict()
    settings = _load(args.config)
    g = settings.gateway
    _ensure_free("gateway", args.listen or g.listen, g.health_listen, g.metrics_listen)
    logs.configure("gateway", settings.logging.level, args.log_file)
    return _serve(
        app.start(settings, listen=args.listen, runtime_address=args.runtime),
        "gateway",
        args.port_file,
    )


def _ensure_free(name: str, *addresses: str, fix: str = "") -> None:
    """Refuses, in one line, a taken address before the service starts (and logs) at all."""
    try:
        for address in filter(None, addresses):
            listen.ensure_free(address, name)
    except listen.AddressInUse as e:
        e.fix = fix
        listen.refuse(e)


def _serve(starting: Awaitable[Served], name: str, port_file: str | None) -> int:
    from agentmem.core import collector, serving

    async def main() -> None:
        served = await starting
        collector.settle()  # a process of its own: what startup made lives as long
        await serving.run_until_signal(served, name, port_file)

    try:
        asyncio.run(main())
    except listen.AddressInUse as e:
        e.what = e.what or name
        listen.refuse(e)
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Starts the runtime on a loopback port, then the gateway in front of it, and keeps
    them running: a service that dies is restarted with backoff (and said so on stderr);
    one that keeps dying stops both and exits non-zero, for an outer supervisor to act on.
    The services' log lines go to files in the data directory; the terminal keeps the
    banner, and after it only warnings, errors and restarts."""
    # Until the supervisor takes over, SIGTERM unwinds through `stop_all` instead of
    # orphaning the services already started.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    private_files.restrict()
    settings = _load(args.config)
    # --data-dir wins; else the configured storage.url (file or environment); else ./data.
    data_dir = args.data_dir
    if data_dir is None and settings.storage.url == config.Storage().url:
        data_dir = "./data"
    lock = None
    if data_dir:  # one `up` per data folder, before anything starts
        try:
            lock = data_lock.hold(Path(data_dir).resolve(), args.listen)
        except data_lock.DataDirInUse as e:
            raise SystemExit(f"agentmem: {e}") from None
    _ensure_free(
        "gateway", args.listen, fix="choose another: --listen HOST:PORT, or make run LISTEN=…"
    )
    _ensure_free(
        "console",
        args.console or "",
        fix="choose another: --console HOST:PORT, or make run CONSOLE=…",
    )
    env = dict(os.environ)
    env["AGENTMEM_INTERNAL__TOKEN"] = secrets.token_urlsafe(32)
    # With a data directory, the services log to files in it; with a configured storage.url
    # and no data directory, to stderr as a service manager expects.
    log_dir = Path(data_dir).resolve() / LOG_DIR if data_dir else None
    dev = None
    if not settings.auth.api_keys:
        dev = dev_credential.load_or_mint(data_dir or "./data", rotate=args.rotate_dev_token)
        env["AGENTMEM_AUTH__API_KEYS"] = json.dumps(
            [
                {
                    "principal": DEV_PRINCIPAL,
                    "tenant": DEV_TENANT,
                    "kind": "user",
                    "scopes": list(config.SCOPES),
                    "sha256": config.token_sha256(dev.token),
                }
            ]
        )
    # -P: the services never import from the working directory (a folder named `agentmem`
    # there, such as a clone seen from its parent, would shadow the installed package).
    base = [sys.executable, "-P", "-m", "agentmem.cli.main"]
    cfg = ["--config", args.config] if args.config else []
    storage = ["--data-dir", data_dir] if data_dir else []
    with tempfile.TemporaryDirectory(prefix="agentmem-up-") as tmp:
        runtime = supervisor.Child(
            "runtime",
            [*base, "runtime", *cfg, *storage, *_log_file(log_dir, "runtime")],
            env,
            Path(tmp, "runtime.port"),
            listen="127.0.0.1:0",
        )
        gateway = supervisor.Child(
            "gateway",
            [*base, "gateway", *cfg, *_log_file(log_dir, "gateway")],
            env,
            Path(tmp, "gateway.port"),
            args.listen,
        )
        children = [runtime, gateway]  # started in this order, stopped in the reverse
        try:
            port = runtime.start()
            gateway.argv += ["--runtime", f"127.0.0.1:{port}"]
            gport = gateway.start()
            if args.port_file:
                Path(args.port_file).write_text(str(gport))
            host = args.listen.rsplit(":", 1)[0]
            if lock is not None:
                data_lock.describe(lock, f"{host}:{gport}")
            where = (
                f"data in {Path(data_dir).resolve()}"
                if data_dir
                else f"storage {make_url(settings.storage.url).render_as_string()}"
            )
            print(
                f"agentmem is serving on {host}:{gport} (runtime on 127.0.0.1:{port}, {where})",
                flush=True,
            )
            if args.console:
                console = _console(args.console, host, gport, base, env, Path(tmp))
                if console is not None:
                    children.append(console)
                    console.start()
            if dev:
                print(dev_credential.describe(dev), flush=True)
                print(
                    f"  export AGENTMEM_ADDR={host}:{gport} AGENTMEM_TOKEN={dev.token}", flush=True
                )
            if log_dir:
                print(f"call logs in {log_dir}/ (warnings and errors also show here)", flush=True)
            return supervisor.supervise(children)
        except supervisor.StartFailed as e:
            if e.code == listen.EXIT_ADDRESS_IN_USE:  # the service said so, in one line
                return e.code
            raise SystemExit(f"agentmem: {e}") from None
        finally:
            supervisor.stop_all(children)
            if lock is not None:
                lock.close()


def _log_file(log_dir: Path | None, service: str) -> list[str]:
    return ["--log-file", str(log_dir / f"{service}.log")] if log_dir else []


def _console(
    address: str, host: str, gport: int, base: list[str], env: dict[str, str], tmp: Path
) -> supervisor.Child | None:
    """The console's child, or None (said in one line) when its libraries are missing: an
    optional part never takes the services down."""
    missing = console_missing()
    if missing:
        print(f"agentmem: the console is not started: {missing}", file=sys.stderr, flush=True)
        return None
    near = "127.0.0.1" if host in ("0.0.0.0", "[::]", "") else host
    return supervisor.Child(
        "console",
        [*base, "console", "--addr", f"{near}:{gport}"],
        # The internal credential is not the console's to hold.
        {k: v for k, v in env.items() if k != "AGENTMEM_INTERNAL__TOKEN"},
        tmp / "console.port",
        address,
    )


def console_missing() -> str:
    """Why the console cannot run in this installation ("" when it can)."""
    try:
        import agentmem.console.server  # noqa: F401  (its libraries: starlette, uvicorn, …)
    except ImportError as e:
        what = e.name or str(e)
        return f"{what} cannot be imported (reinstall agentmem-service)"
    return ""
