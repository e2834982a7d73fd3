"""docs/cli.md lists every command and option the parser has (the reference is generated
from it: `python scripts/cli_reference.py`), and no page names a command that does not
exist."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import cli_reference  # noqa: E402

from agentmem.cli.main import parser  # noqa: E402

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROSE = {"is", "derives"}  # "agentmem is serving on …": output, not a command


def test_the_command_reference_is_generated_from_the_parser():
    page = cli_reference.PAGE.read_text()
    assert cli_reference.with_reference(page) == page, "run: python scripts/cli_reference.py"


def test_every_command_and_option_is_on_the_page():
    page = cli_reference.PAGE.read_text()
    for path, sub, _ in cli_reference._commands(parser(), (), ""):
        assert "agentmem " + " ".join(path) in page
        for action in sub._actions:
            for flag in action.option_strings:
                if flag.startswith("--"):
                    assert flag in page, f"agentmem {' '.join(path)} {flag}"


def _tree(p: argparse.ArgumentParser) -> dict[str, dict]:
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: _tree(sub) for a in subs for name, sub in a.choices.items()}


def _code(page: str) -> str:
    """What a page shows as code: fenced blocks and inline code spans, one per line."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", page, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", page, flags=re.S | re.M)
    return "\n".join([*fenced, *re.findall(r"`([^`\n]+)`", prose)])


def test_no_page_names_a_command_that_does_not_exist():
    tree = _tree(parser())
    named = re.compile(r"(?:^|\$ |\| )\s*agentmem((?: [a-z][a-z-]*)+)", flags=re.M)
    wrong = []
    for page in PAGES:
        for m in named.finditer(_code(page.read_text())):
            level = tree
            if m.group(1).split()[0] in PROSE:
                continue
            for word in m.group(1).split():
                if not level:
                    break  # an argument of a command without subcommands
                if word not in level:
                    wrong.append((page.name, m.group(0).strip()))
                    break
                level = level[word]
    assert wrong == []
