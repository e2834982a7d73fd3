"""One service's process: `python -m runtime_svc` and `python -m protocol_svc` (which
`agentmem runtime`, `agentmem gateway` and `agentmem up` start) read their options, refuse a
taken address in one line, configure logging and serve until a signal."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from agentmem.process import listen, logs, private_files
from agentmem_kernel import collector, config, serving, tracing

LOG_FILE_HELP = "append the JSON log lines here; only warnings and errors go to stderr"


def parser(service: str, section: str) -> argparse.ArgumentParser:
    """The options every service takes; a service adds its own."""
    p = argparse.ArgumentParser(prog=f"python -m {service}")
    p.add_argument("--config", help="YAML config file (default: built-in defaults)")
    p.add_argument("--listen", help=f"overrides {section}.listen")
    p.add_argument("--port-file", help="write the bound port here once serving")
    p.add_argument("--log-file", help=LOG_FILE_HELP)
    return p


def sqlite_url(data_dir: str) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'agentmem.db'}"


def settings(path: str | None, overrides: dict[str, Any] | None = None) -> config.Settings:
    """The configuration, or exit with the offending key in one line."""
    try:
        return config.load(path, overrides)
    except config.ConfigError as e:
        raise SystemExit(f"agentmem: {e}") from None


def prepare(
    name: str, args: argparse.Namespace, overrides: dict[str, Any] | None = None
) -> config.Settings:
    """Private files, the configuration, free addresses, logging: all before serving."""
    private_files.restrict()
    s = settings(args.config, overrides)
    section = s.runtime if name == "runtime" else s.gateway
    ensure_free(name, args.listen or section.listen, section.health_listen, section.metrics_listen)
    logs.configure(name, s.logging.level, args.log_file, tracing.current_ids)
    return s


def ensure_free(name: str, *addresses: str, fix: str = "") -> None:
    """Refuses, in one line, a taken address before the service starts (and logs) at all."""
    try:
        for address in filter(None, addresses):
            listen.ensure_free(address, name)
    except listen.AddressInUse as e:
        e.fix = fix
        listen.refuse(e)


def serve(starting: Awaitable[serving.Served], name: str, port_file: str | None) -> int:
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
