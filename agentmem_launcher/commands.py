"""The service's commands as the `agentmem` command lists them: the parsers only. What runs
them (agentmem_launcher.servers: the configuration, SQLAlchemy, pydantic) is imported when
one is chosen, so `agentmem --help` does not pay for it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from agentmem.client.commands import SubParsers

# The words of agentmem_kernel.launch.LOG_FILE_HELP (tests/unit/test_cli_imports.py), which
# imports the configuration.
LOG_FILE_HELP = "append the JSON log lines here; only warnings and errors go to stderr"


def _later(name: str) -> Callable[[argparse.Namespace], int]:
    def command(args: argparse.Namespace) -> int:
        from agentmem_launcher import servers

        run: Callable[[argparse.Namespace], int] = getattr(servers, name)
        return run(args)

    return command


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
        help="mint new credentials (yours and the agents') instead of reusing those in the "
        "data directory",
    )
    up.set_defaults(func=_later("cmd_up"))

    gw = sub.add_parser("gateway", help="run the gateway (protocol_svc) alone")
    gw.add_argument("--config", help="YAML config file (default: built-in defaults)")
    gw.add_argument("--listen", help="overrides gateway.listen")
    gw.add_argument("--runtime", help="runtime address; overrides gateway.runtime_address")
    gw.add_argument("--port-file", help="write the bound port here once serving")
    gw.add_argument("--log-file", help=LOG_FILE_HELP)
    gw.set_defaults(func=_later("cmd_gateway"))

    rt = sub.add_parser("runtime", help="run the memory runtime (runtime_svc) alone")
    rt.add_argument("--config", help="YAML config file (default: built-in defaults)")
    rt.add_argument("--listen", help="overrides runtime.listen")
    rt.add_argument("--data-dir", help="put the SQLite database here (overrides storage.url)")
    rt.add_argument("--port-file", help="write the bound port here once serving")
    rt.add_argument("--log-file", help=LOG_FILE_HELP)
    rt.set_defaults(func=_later("cmd_runtime"))
