"""Each server has its own port, in its defaults and in the pages' examples, so a newcomer
who starts two of them as documented never finds the second refused."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from agentmem.cli.main import parser
from agentmem_kernel import config

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _sub(p: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    (action,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]


def _default(p: argparse.ArgumentParser, dest: str) -> object:
    return next(a.default for a in p._actions if a.dest == dest)


def defaults() -> dict[str, int]:
    p = parser()
    return {
        "gateway": int(config.Settings().gateway.listen.rsplit(":", 1)[1]),
        "console": int(str(_default(_sub(p, "console"), "listen")).rsplit(":", 1)[1]),
        "mcp": int(str(_default(_sub(p, "mcp"), "port"))),
    }


def documented() -> dict[str, set[int]]:
    """The ports the pages' examples give each server."""
    found: dict[str, set[int]] = {"console": set(), "mcp": set(), "app-server": set()}
    patterns = {
        "console": r"--console \S+:(\d+)|console --listen \S+:(\d+)|console on http://\S+:(\d+)",
        "mcp": r"mcp --transport http --port (\d+)|http://127\.0\.0\.1:(\d+)/mcp",
        "app-server": r"ws://[\w.\[\]:]+?:(\d+)",
    }
    for page in PAGES:
        text = page.read_text()
        for service, pattern in patterns.items():
            for m in re.finditer(pattern, text):
                found[service].add(int(next(g for g in m.groups() if g)))
    return found


def test_servers_have_distinct_default_ports():
    ports = defaults()
    assert len(set(ports.values())) == len(ports), ports


def test_no_port_is_documented_for_two_servers():
    ports = documented()
    for name, port in defaults().items():
        ports.setdefault(name, set()).add(port)
    shared = {(a, b, p) for a in ports for b in ports if a < b for p in ports[a] & ports[b]}
    assert shared == set()
