"""What the CLI says when a value is zero or nothing matches: said plainly and truly."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ROOT


@pytest.fixture
def cli(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    monkeypatch.delenv("AGENTMEM_EXPERIMENTAL", raising=False)

    def run(*argv: str, expect: int = 0) -> str:
        with pytest.raises(SystemExit) as e:
            main(list(argv))
        out = capsys.readouterr()
        assert e.value.code == expect, out.err
        return out.out

    return run


def test_policy_get_shows_revision_zero_before_any_override(cli):
    assert json.loads(cli("policy", "get", "--json"))["revision"] == 0  # a number, present
    lines = [line.split() for line in cli("policy", "get").splitlines()]
    assert ["rev", "0"] in lines, lines  # `rev`, as every read and table heads a revision


def test_erase_by_with_no_match_says_nothing_would_be_erased(cli):
    out = cli("sources", "erase-by", "--thread", "no-such-thread")
    assert out.strip() == "no memory matches: nothing would be erased"
    out = cli("sources", "erase-by", "--thread", "no-such-thread", "--yes")
    assert out.strip() == "no memory matches: nothing erased"


def test_sources_list_says_erased_sources_are_listed_with_a_filter(cli):
    sid = json.loads(cli("insert", "a memory to erase", "--json"))["source_id"]
    cli("sources", "erase", sid, "--expected-revision", "1")
    assert json.loads(cli("sources", "list", "--json"))["sources"] == []
    out = cli("sources", "list")
    assert out.strip() == (
        "no active sources (pending, rejected and erased ones are listed with "
        "--state pending_review, --state rejected or --state erased)"
    )
    erased = json.loads(cli("sources", "list", "--state", "erased", "--json"))["sources"]
    assert sid in [s["source_id"] for s in erased]  # where the message says they are


def test_app_server_usage_shows_serving_and_the_generators():
    usage = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "app-server", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.split("\n\n")[0]
    lines = usage.splitlines()
    assert lines[0].startswith("usage: agentmem app-server [-h] [--listen LISTEN]")
    assert "GENERATOR" not in usage  # no positional that looks required
    assert "agentmem app-server {generate-json-schema,generate-ts} --out OUT" in usage
    reference = (ROOT / "docs" / "cli.md").read_text()
    assert "\nagentmem app-server [--listen LISTEN]" in reference
    assert "\nagentmem app-server generate-ts --out OUT" in reference
