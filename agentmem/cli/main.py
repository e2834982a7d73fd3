"""`agentmem`: run the services (up, gateway, runtime) and call them."""

from __future__ import annotations

import argparse
import hashlib
import sys

from agentmem.cli import client, servers


def _hash_token(args: argparse.Namespace) -> int:
    token = sys.stdin.readline().strip() if args.token == "-" else args.token
    print(hashlib.sha256(token.encode()).hexdigest())
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentmem", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    servers.add_parsers(sub)
    client.add_parsers(sub)
    ht = sub.add_parser("hash-token", help="print the sha256 to put in auth.api_keys for a token")
    ht.add_argument("token", help="the token, or - to read it from standard input")
    ht.set_defaults(func=_hash_token)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
