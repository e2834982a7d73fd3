"""`agentmem up | gateway | runtime`: run the services."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentmem.cli import dev_credential
from agentmem.core import config, logs

DEV_TENANT = "dev"
DEV_PRINCIPAL = "dev"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="run the gateway and the runtime together (SQLite)")
    up.add_argument("--config", help="YAML config file (default: built-in defaults)")
    up.add_argument("--listen", default="127.0.0.1:50051", help="gateway address (HOST:PORT)")
    up.add_argument("--data-dir", default="./data", help="where the SQLite database lives")
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
    gw.set_defaults(func=cmd_gateway)

    rt = sub.add_parser("runtime", help="run the memory runtime (runtime_svc) alone")
    rt.add_argument("--config", help="YAML config file (default: built-in defaults)")
    rt.add_argument("--listen", help="overrides runtime.listen")
    rt.add_argument("--data-dir", help="put the SQLite database here (overrides storage.url)")
    rt.add_argument("--port-file", help="write the bound port here once serving")
    rt.set_defaults(func=cmd_runtime)


def _load(path: str | None, overrides: dict | None = None) -> config.Settings:
    try:
        return config.load(path, overrides)
    except config.ConfigError as e:
        raise SystemExit(f"agentmem: {e}") from None


def sqlite_url(data_dir: str) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'agentmem.db'}"


def cmd_runtime(args: argparse.Namespace) -> int:
    from runtime_svc import app

    overrides = {"storage.url": sqlite_url(args.data_dir)} if args.data_dir else None
    settings = _load(args.config, overrides)
    logs.configure("runtime", settings.logging.level)
    return _serve(app.start(settings, listen=args.listen), "runtime", args.port_file)


def cmd_gateway(args: argparse.Namespace) -> int:
    from protocol_svc import app

    settings = _load(args.config)
    logs.configure("gateway", settings.logging.level)
    return _serve(
        app.start(settings, listen=args.listen, runtime_address=args.runtime),
        "gateway",
        args.port_file,
    )


def _serve(starting, name: str, port_file: str | None) -> int:  # type: ignore[no-untyped-def]
    from agentmem.core import serving

    async def main() -> None:
        served = await starting
        await serving.run_until_signal(served, name, port_file)

    asyncio.run(main())
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Starts the runtime on a loopback port, then the gateway in front of it."""
    # Until the supervisor takes over, SIGTERM unwinds through `_stop` instead of orphaning
    # the services already started.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    settings = _load(args.config)
    env = dict(os.environ)
    env["AGENTMEM_INTERNAL__TOKEN"] = secrets.token_urlsafe(32)
    dev = None
    if not settings.auth.api_keys:
        dev = dev_credential.load_or_mint(args.data_dir, rotate=args.rotate_dev_token)
        dev_token = dev.token
        env["AGENTMEM_AUTH__API_KEYS"] = json.dumps(
            [
                {
                    "principal": DEV_PRINCIPAL,
                    "tenant": DEV_TENANT,
                    "kind": "user",
                    "scopes": list(config.SCOPES),
                    "sha256": config.token_sha256(dev_token),
                }
            ]
        )
    base = [sys.executable, "-m", "agentmem.cli.main"]
    cfg = ["--config", args.config] if args.config else []
    with tempfile.TemporaryDirectory(prefix="agentmem-up-") as tmp:
        runtime_port, gateway_port = Path(tmp, "runtime.port"), Path(tmp, "gateway.port")
        procs: list[subprocess.Popen] = []
        try:
            procs.append(
                subprocess.Popen(
                    [
                        *base,
                        "runtime",
                        *cfg,
                        "--listen",
                        "127.0.0.1:0",
                        "--data-dir",
                        args.data_dir,
                        "--port-file",
                        str(runtime_port),
                    ],
                    env=env,
                )
            )
            port = _wait_for_port(runtime_port, procs[0])
            procs.append(
                subprocess.Popen(
                    [
                        *base,
                        "gateway",
                        *cfg,
                        "--listen",
                        args.listen,
                        "--runtime",
                        f"127.0.0.1:{port}",
                        "--port-file",
                        str(gateway_port),
                    ],
                    env=env,
                )
            )
            gport = _wait_for_port(gateway_port, procs[1])
            if args.port_file:
                Path(args.port_file).write_text(str(gport))
            host = args.listen.rsplit(":", 1)[0]
            print(
                f"agentmem is serving on {host}:{gport} (runtime on 127.0.0.1:{port}, "
                f"data in {Path(args.data_dir).resolve()})",
                flush=True,
            )
            if args.console:
                near = "127.0.0.1" if host in ("0.0.0.0", "[::]", "") else host
                procs.append(_start_console(base, args.console, f"{near}:{gport}", tmp, env))
            if dev:
                print(dev_credential.describe(dev), flush=True)
                print(
                    f"  export AGENTMEM_ADDR={host}:{gport} AGENTMEM_TOKEN={dev.token}", flush=True
                )
            return _supervise(procs)
        finally:
            _stop(procs)


def _start_console(
    base: list[str], listen: str, gateway: str, tmp: str, env: dict[str, str]
) -> subprocess.Popen:
    """The console beside the gateway; it prints its own address once serving."""
    port_file = Path(tmp, "console.port")
    proc = subprocess.Popen(
        [*base, "console", "--listen", listen, "--addr", gateway, "--port-file", str(port_file)],
        env={k: v for k, v in env.items() if k != "AGENTMEM_INTERNAL__TOKEN"},  # not its to hold
    )
    _wait_for_port(port_file, proc)
    return proc


def _wait_for_port(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return int(path.read_text())
        if proc.poll() is not None:
            raise SystemExit(f"agentmem: a service exited during start-up (code {proc.returncode})")
        time.sleep(0.05)
    raise SystemExit("agentmem: a service did not start within 60 s")


def _supervise(procs: list[subprocess.Popen]) -> int:
    stopping = False

    def on_signal(signum, _frame):  # type: ignore[no-untyped-def]
        nonlocal stopping
        stopping = True
        for p in reversed(procs):  # gateway first, so it stops taking calls
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while True:
        for p in procs:
            code = p.poll()
            if code is not None:
                if not stopping:
                    print(f"agentmem: a service exited with code {code}; stopping", file=sys.stderr)
                    on_signal(signal.SIGTERM, None)
                for q in procs:
                    q.wait()
                return 0 if stopping else 1
        time.sleep(0.2)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
