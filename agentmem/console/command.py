"""`agentmem console`: the command that serves the web console (added to `agentmem` through
the `agentmem.commands` entry point; starlette and uvicorn are imported only when it runs)."""

from __future__ import annotations

import argparse
import os
import sys

from agentmem.client.commands import SubParsers


def add_parsers(sub: SubParsers) -> None:
    con = sub.add_parser(
        "console", help="serve the web console for people (review, inspect, erase)"
    )
    con.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT to serve on")
    con.add_argument(
        "--addr",
        default=os.environ.get("AGENTMEM_ADDR", "127.0.0.1:50051"),
        help="gateway address (env AGENTMEM_ADDR)",
    )
    con.add_argument("--gateway-ca", help="CA file: reach the gateway over TLS")
    con.add_argument("--tls-cert", help="serve HTTPS with this certificate (cookies become Secure)")
    con.add_argument("--tls-key", help="the certificate's private key")
    con.add_argument(
        "--secure-cookies",
        action="store_true",
        help="mark cookies Secure (behind a proxy that terminates TLS)",
    )
    con.add_argument("--port-file", help="write the bound port here once serving")
    con.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from agentmem.console import missing as console_missing

    missing = console_missing()
    if missing:
        print(f"agentmem: the console cannot start: {missing}", file=sys.stderr)
        return 2
    from agentmem.console import server

    return server.run(
        args.listen,
        args.addr,
        gateway_ca=args.gateway_ca,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        secure_cookies=args.secure_cookies,
        port_file=args.port_file,
    )
