"""`agentmem up | gateway | runtime`: run the services."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import sys
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

from agentmem.console import missing as console_missing
from agentmem.process import listen, private_files
from agentmem_kernel import config, launch
from agentmem_launcher import data_lock, dev_credential, supervisor

# `agentmem up` keeps its services' logs here, in the data directory.
LOG_DIR = "logs"


# -P: the services never import from the working directory (a folder named `agentmem`
# there, such as a clone seen from its parent, would shadow the installed package).
PYTHON = [sys.executable, "-P", "-m"]
# What each command starts, by module name: the launcher never imports a service.
SERVICES = {"runtime": "runtime_svc", "gateway": "protocol_svc"}
CONSOLE = "agentmem.cli.main"


def _options(args: argparse.Namespace, *names: str) -> list[str]:
    """The given options of a parsed command, as command-line arguments again."""
    out: list[str] = []
    for name in names:
        value = getattr(args, name.replace("-", "_"))
        if value is not None:
            out += [f"--{name}", value]
    return out


def cmd_runtime(args: argparse.Namespace) -> int:
    options = _options(args, "config", "listen", "data-dir", "port-file", "log-file")
    return _become(SERVICES["runtime"], options)


def cmd_gateway(args: argparse.Namespace) -> int:
    options = _options(args, "config", "listen", "runtime", "port-file", "log-file")
    return _become(SERVICES["gateway"], options)


def _become(module: str, options: list[str]) -> int:
    """This process becomes the service (same process id, signals and exit code)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [*PYTHON, module, *options])
    return 0  # not reached


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
    settings = launch.settings(args.config)
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
    launch.ensure_free(
        "gateway", args.listen, fix="choose another: --listen HOST:PORT, or make run LISTEN=…"
    )
    launch.ensure_free(
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
    if not settings.auth.api_keys:  # the person's credential and an agent's, for hosts
        try:
            dev = dev_credential.both(data_dir or "./data", rotate=args.rotate_dev_token)
        except ValueError as e:
            raise SystemExit(f"agentmem: {e}") from None
        env["AGENTMEM_AUTH__API_KEYS"] = json.dumps([dev_credential.api_key(c) for c in dev])
    cfg = ["--config", args.config] if args.config else []
    storage = ["--data-dir", data_dir] if data_dir else []
    with tempfile.TemporaryDirectory(prefix="agentmem-up-") as tmp:
        runtime = supervisor.Child(
            "runtime",
            [*PYTHON, SERVICES["runtime"], *cfg, *storage, *_log_file(log_dir, "runtime")],
            env,
            Path(tmp, "runtime.port"),
            listen="127.0.0.1:0",
        )
        gateway = supervisor.Child(
            "gateway",
            [*PYTHON, SERVICES["gateway"], *cfg, *_log_file(log_dir, "gateway")],
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
                console = _console(args.console, host, gport, env, Path(tmp))
                if console is not None:
                    children.append(console)
                    console.start()
            if dev:
                person, agent = dev
                print(dev_credential.describe(person), flush=True)
                print(
                    f"  export AGENTMEM_ADDR={host}:{gport} AGENTMEM_TOKEN={person.token}",
                    flush=True,
                )
                print(dev_credential.describe(agent), flush=True)
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
    address: str, host: str, gport: int, env: dict[str, str], tmp: Path
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
        [*PYTHON, CONSOLE, "console", "--addr", f"{near}:{gport}"],
        # The internal credential is not the console's to hold.
        {k: v for k, v in env.items() if k != "AGENTMEM_INTERNAL__TOKEN"},
        tmp / "console.port",
        address,
    )
