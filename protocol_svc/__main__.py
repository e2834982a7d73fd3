"""`python -m protocol_svc`: the gateway alone (`agentmem gateway` and `agentmem up` start
it so)."""

from __future__ import annotations

import sys

from agentmem_kernel import launch


def main(argv: list[str] | None = None) -> int:
    p = launch.parser("protocol_svc", "gateway")
    p.add_argument("--runtime", help="runtime address; overrides gateway.runtime_address")
    args = p.parse_args(argv)
    from protocol_svc import app

    settings = launch.prepare("gateway", args)
    starting = app.start(settings, listen=args.listen, runtime_address=args.runtime)
    return launch.serve(starting, "gateway", args.port_file)


if __name__ == "__main__":
    sys.exit(main())
