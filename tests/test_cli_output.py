"""The CLI's default output is for people: one short line per write, aligned columns, short
lower-case state names, rounded scores, relative times, nothing empty; `--json` stays for
scripts; `--help` names AGENTMEM_ADDR and AGENTMEM_TOKEN; an https:// address against a
plaintext gateway is one clear line, not gRPC's log lines."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ROOT

PROTO_NAMES = re.compile(r"CLASSIFICATION_|STATUS_|EFFECTIVE_RETRIEVAL_STATE_|REASON_|MEMORY_MODE_")


@pytest.fixture
def cli(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)

    def run(*argv: str) -> str:
        with pytest.raises(SystemExit) as e:
            main(list(argv))
        out = capsys.readouterr()
        assert e.value.code == 0, out.err
        return out.out

    return run


def columns_align(lines: list[str]) -> None:
    """Every row's cells start where the header's columns start."""
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", header)]
    for row in lines[1:]:
        for start in starts:
            assert row[start - 1] == " " and row[start] != " ", (header, row)


def test_writes_are_one_short_line_and_reads_are_tables(cli):
    out = cli("insert", "I have a yellow Squier Tele with a black pickguard", "--thread", "t1")
    assert re.fullmatch(r"saved (src_\w+) \(rev 1, status active\)\n", out), out
    sid = out.split()[1]
    other = cli("insert", "My Squier amp hums", "--receipt").splitlines()
    assert len(other) == 2 and other[1].startswith("receipt rcpt_") and "hash" in other[1]
    assert cli("sources", "classify", sid, "cold", "--expected-revision", "1") == (
        f"classified {sid} (classification active → cold, rev 2)\n"
    )
    listed = cli("sources", "list").splitlines()
    assert listed[0] == "2 sources"
    table = [line.strip() for line in listed[1:]]
    assert table[0].split() == ["source", "rev", "kind", "classification", "status", "state"]
    assert table[2].split()[-3:] == ["cold", "active", "cold"]  # newest first: sid is older
    columns_align(listed[1:])
    shown = cli("sources", "get", sid)
    assert re.search(r"^created +(just now|\d+ s ago)$", shown, re.M), shown
    assert "thread" in shown and "next_page_token" not in shown
    everything = shown + "\n".join(listed) + cli("memories", "list") + cli("explain", "Squier")
    assert not PROTO_NAMES.search(everything), everything


def test_scores_are_rounded_and_lists_say_how_many(cli):
    sid = cli("insert", "I have a yellow Squier Tele").split()[1]
    found = cli("search", "Squier Tele").splitlines()
    assert found[0] == "1 hit"
    assert re.search(r"  \d+\.\d{2}  ", found[2]) and not re.search(r"\d\.\d{4,}", found[2])
    assert sid in found[2] and "citation" not in found[1]
    assert cli("search", "zebra").strip() == "no hits"
    explained = cli("explain", "Squier Tele").splitlines()
    assert explained[1] == "1 entry" and "selected" in explained[3]


def test_a_conversation_is_explained_and_found_by_its_passage_counted_from_one(cli, stack):
    said = [f"small talk {i}" for i in range(10)]
    said[6] = "my zqbassoon needs a new reed"
    sid = (
        stack.client()
        .insert_memory(messages=[{"role": "user", "content": t} for t in said])
        .source_id
    )
    for command in ("explain", "search"):
        lines = cli(command, "zqbassoon").splitlines()
        head, row = lines[-2], lines[-1]
        assert "passage" in head.split() and sid in row, lines
        where = re.search(r"messages? (\d+)(?:-(\d+))?", row)
        assert where is not None and int(where.group(2) or where.group(1)) == 7, row


def test_thread_mode_never_prints_a_missing_time(cli):
    assert cli("thread-mode", "get", "t7") == "thread t7: memory enabled (never set: the default)\n"
    assert cli("thread-mode", "set", "t7", "disabled", "--expected-revision", "0") == (
        "set memory for thread t7 (mode enabled → disabled, rev 1)\n"
    )
    got = cli("thread-mode", "get", "t7")
    assert re.fullmatch(
        r"thread t7: memory disabled \(revision 1, since (just now|\d+ s ago)\)\n", got
    )
    assert "-" not in got


def test_json_stays_machine_output(cli):
    saved = json.loads(cli("insert", "I have a red kayak", "--json"))
    assert saved["status"] == "active" and saved["receipt"]["hash"]
    listed = json.loads(cli("sources", "list", "--json"))
    assert listed["sources"][0]["classification"] == "active"
    assert "next_page_token" in listed


def test_help_names_the_environment(capsys):
    for argv in (["--help"], ["search", "--help"], ["sources", "list", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert "AGENTMEM_ADDR" in text and "AGENTMEM_TOKEN" in text, argv


def test_https_against_a_plaintext_gateway_is_one_clear_line(stack):
    env = {
        **{k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"},
        "AGENTMEM_TOKEN": ADMIN_A.token,
        "AGENTMEM_ADDR": f"https://{stack.address}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "sources", "list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("agentmem: the TLS handshake with") and "plaintext" in lines[0]
