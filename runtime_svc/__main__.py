"""`python -m runtime_svc`: the memory runtime alone (`agentmem runtime` and `agentmem up`
start it so)."""

from __future__ import annotations

import sys

from agentmem_kernel import launch


def main(argv: list[str] | None = None) -> int:
    p = launch.parser("runtime_svc", "runtime")
    p.add_argument("--data-dir", help="put the SQLite database here (overrides storage.url)")
    args = p.parse_args(argv)
    from runtime_svc import app

    overrides = {"storage.url": launch.sqlite_url(args.data_dir)} if args.data_dir else None
    settings = launch.prepare("runtime", args, overrides)
    return launch.serve(app.start(settings, listen=args.listen), "runtime", args.port_file)


if __name__ == "__main__":
    sys.exit(main())
