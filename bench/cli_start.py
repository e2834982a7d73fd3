"""How fast the `agentmem` command answers: `--version`, `--help` and a search round trip
against running services, each the median of N runs, next to `python -c pass` measured
interleaved in the same run (a busy machine slows all of them alike).

    python -m bench.cli_start            # make bench-cli; --runs N (default 20)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import servers

TOKEN = "bench-cli-token"


def agentmem_command() -> list[str]:
    """The installed script beside this Python (what an agent shells out to)."""
    script = Path(sys.executable).parent / "agentmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentmem.cli.main"]


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__)
    a.add_argument("--runs", type=int, default=20)
    args = a.parse_args()
    cli = agentmem_command()
    with tempfile.TemporaryDirectory() as tmp:
        keys = [servers.key(TOKEN, "bench", servers.ALL_SCOPES)]
        with servers.agentmem(Path(tmp), keys) as address:
            env = {**os.environ, "AGENTMEM_ADDR": address, "AGENTMEM_TOKEN": TOKEN}
            rows = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "agentmem --version": [*cli, "--version"],
                "agentmem --help": [*cli, "--help"],
                "agentmem search x (round trip)": [*cli, "search", "x"],
            }
            times: dict[str, list[float]] = {name: [] for name in rows}
            for run in range(args.runs + 1):  # the first round warms the caches, unmeasured
                for name, argv in rows.items():
                    start = time.perf_counter()
                    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
                    if run:
                        times[name].append((time.perf_counter() - start) * 1000)
    print(f"| command | p50 ms ({args.runs} runs, interleaved) |")
    print("|---|---|")
    for name, samples in times.items():
        print(f"| `{name}` | {statistics.median(samples):.0f} |")


if __name__ == "__main__":
    main()
