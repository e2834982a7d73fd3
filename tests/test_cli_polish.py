"""The CLI's rough edges: version, help texts, closed pipes, error lines, export → import."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys

import pytest

import agentmem
from agentmem.cli.main import main, parser
from tests.harness import ADMIN_A, READER_A, ROOT


@pytest.fixture
def cli(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    monkeypatch.delenv("AGENTMEM_EXPERIMENTAL", raising=False)

    def run(*argv: str, expect: int = 0) -> tuple[str, str]:
        with pytest.raises(SystemExit) as e:
            main(list(argv))
        out = capsys.readouterr()
        assert e.value.code == expect, out.err
        return out.out, out.err

    return run


def _env(stack, token: str = ADMIN_A.token) -> dict[str, str]:
    return {**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": token}


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"agentmem {agentmem.__version__}"
    assert agentmem.__version__ != "0+unknown"  # installed: the distribution's version


def _parsers(p: argparse.ArgumentParser, path: str = "agentmem"):
    yield path, p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def test_every_command_and_option_has_help_text():
    missing = []
    for path, p in _parsers(parser()):
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        for sub in subs:
            for choice in sub._choices_actions:
                if not choice.help:
                    missing.append(f"{path} {choice.dest}")
    assert missing == []


def test_errors_say_what_and_why_without_tracebacks(cli):
    _, err = cli("sources", "get", "src_missing", expect=1)
    assert err.strip() == "agentmem: NOT_FOUND: source src_missing was not found"
    cli("thread-mode", "set", "t1", "disabled", "--expected-revision", "0")
    _, err = cli("thread-mode", "set", "t1", "enabled", "--expected-revision", "0", expect=1)
    assert "REVISION_MISMATCH" in err and "current revision is 1" in err
    assert "thread t1" in err and "Traceback" not in err
    _, err = cli("import", "/nonexistent/memories.jsonl", expect=1)
    assert "No such file" in err and "Traceback" not in err


def test_review_reads_the_revision_and_still_fails_safely(cli):
    cli("policy", "set", "review_pending", "--expected-revision", "0")
    out, _ = cli("insert", "pending thing", "--json")
    sid = json.loads(out)["source_id"]
    _, err = cli("memories", "review", sid, "approve", "--expected-revision", "7", expect=1)
    assert "REVISION_MISMATCH" in err and "current revision is 1" in err
    out, _ = cli("memories", "review", sid, "approve", "--json")  # as the README shows it
    assert json.loads(out)["status"] == "active"
    _, err = cli("memories", "review", sid, "reject", expect=1)
    assert "NOT_PENDING_REVIEW" in err


def test_closed_pipes_end_quietly(stack):
    client = stack.client()
    for i in range(400):  # well over a pipe buffer of export lines
        client.insert_memory(content=f"memory number {i} " + "padding " * 40)
    for argv in (["export"], ["audit", "list", "--all"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentmem.cli.main", *argv],
            cwd=ROOT,
            env=_env(stack),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout.readline()  # like `| head -1`
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
        assert "Traceback" not in err and "BrokenPipe" not in err, err
        assert code == 141


def test_export_then_import_round_trip(make_stack, tmp_path, monkeypatch, capsys):
    source, target = make_stack(), make_stack()
    a = source.client()
    kept = a.insert_memory(content="I have a red kayak", save_intent="explicit_user_request")
    cold = a.insert_memory(
        messages=[{"role": "user", "content": "I moved to Lisbon"}], save_intent_source="cli"
    )
    a.set_source_classification(
        source_id=cold.source_id, classification="cold", expected_revision=1
    )
    gone = a.insert_memory(content="revoked thing")
    a.revoke_source(source_id=gone.source_id)
    a.set_insert_policy(insert_policy="review_pending", expected_revision=0)
    a.insert_memory(content="waiting for review")

    def run(addr: str, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "agentmem.cli.main", *argv],
            cwd=ROOT,
            env={**_env(source), "AGENTMEM_ADDR": addr},
            capture_output=True,
            text=True,
            timeout=120,
        )

    exported = run(source.address, "export")
    assert exported.returncode == 0, exported.stderr
    assert "left out 1 revoked" in exported.stderr
    lines = [json.loads(x) for x in exported.stdout.splitlines()]
    assert {x["source_id"] for x in lines} == {kept.source_id, cold.source_id} | {
        x["source_id"] for x in lines if x["status"] == "pending_review"
    }
    path = tmp_path / "export.jsonl"
    path.write_text(exported.stdout)

    first = run(target.address, "import", str(path))
    assert first.returncode == 0, first.stderr
    assert "imported 2, already present 0, refused 0; skipped 1 not active" in first.stdout
    again = run(target.address, "import", str(path))
    assert "imported 0, already present 2, refused 0" in again.stdout  # nothing twice

    b = target.client()
    memories = {m.content or m.messages[0].content: m for m in b.list_memories().memories}
    assert set(memories) == {"I have a red kayak", "I moved to Lisbon"}
    assert kept.source_id not in {m.source_id for m in memories.values()}  # ids re-minted
    assert memories["I have a red kayak"].save_intent == "explicit_user_request"
    assert memories["I moved to Lisbon"].classification == 2  # cold again
    assert memories["I moved to Lisbon"].save_intent_source == "cli"
    assert memories["I moved to Lisbon"].source_kind == 2  # a conversation
    # and what it imported exports again in the same format
    reexported = [json.loads(x) for x in run(target.address, "export").stdout.splitlines()]
    assert sorted(x["classification"] for x in reexported) == ["active", "cold"]


def test_bad_lines_are_reported_by_number_and_skipped_or_refused(stack, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"content": "good one"}),
                '{"content": "my secret diary", ',
                json.dumps({"content": "my secret diary", "colour": "red"}),
                json.dumps({"content": 7}),
                "",
                json.dumps({"content": "good two", "source_id": "src_exported"}),
                json.dumps({"source_id": "src_no_text", "status": "active"}),
            ]
        )
        + "\n"
    )

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "agentmem.cli.main", "import", str(path), *extra],
            cwd=ROOT,
            env=_env(stack),
            capture_output=True,
            text=True,
            timeout=120,
        )

    refused = run()
    assert refused.returncode == 1
    for number, what in (
        (2, "invalid JSON"),
        (3, "unknown field(s) colour"),
        (4, "content must be a string"),
        (7, "needs exactly one of content and messages"),
    ):
        assert f"line {number}: {what}" in refused.stderr, refused.stderr
    assert "secret" not in refused.stderr and "Traceback" not in refused.stderr
    assert "nothing imported" in refused.stderr
    assert len(stack.client().list_sources().sources) == 0

    skipped = run("--on-bad-line", "skip")
    assert skipped.returncode == 0, skipped.stderr
    assert "imported 2, already present 0" in skipped.stdout
    assert "skipped 4 bad line(s)" in skipped.stdout
    assert len(stack.client().list_sources().sources) == 2


def test_reader_export_has_no_text_and_import_says_why(stack, tmp_path):
    stack.client().insert_memory(content="exportable memory")
    out = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "export"],
        cwd=ROOT,
        env=_env(stack, READER_A.token),
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    path = tmp_path / "x.jsonl"
    path.write_text(out)
    result = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "import", str(path)],
        cwd=ROOT,
        env=_env(stack),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "memory.content.read" in result.stderr


def test_mcp_without_the_extra_names_it(monkeypatch, capsys):
    for name in [*sys.modules, "mcp"]:  # as if the extra were not installed
        if name == "mcp" or name.startswith("mcp."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "agentmem.mcp.server", raising=False)
    monkeypatch.delattr(importlib.import_module("agentmem.mcp"), "server", raising=False)
    monkeypatch.setenv("AGENTMEM_TOKEN", "t")
    with pytest.raises(SystemExit) as e:
        main(["mcp"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "agentmem-client[mcp]" in err and "./client[mcp]" in err and "Traceback" not in err


def test_no_choice_list_in_help_offers_an_empty_choice():
    empty = [
        f"{path} {action.option_strings or action.dest}"
        for path, p in _parsers(parser())
        for action in p._actions
        if action.choices and not isinstance(action, argparse._SubParsersAction)
        if "" in action.choices
    ]
    assert empty == []


def test_insert_reads_standard_input_for_a_dash_and_a_file_for_file(stack, cli, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "insert", "-", "--json"],
        input="I keep a red kayak in the garage\n",
        env=_env(stack),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    from_stdin = json.loads(done.stdout)["source_id"]
    note = tmp_path / "note.txt"
    note.write_text("My bike is a blue Brompton\n", encoding="utf-8")
    out, _ = cli("insert", "--file", str(note), "--json")
    from_file = json.loads(out)["source_id"]
    contents = {
        json.loads(cli("sources", "get", sid, "--content", "--json")[0])["content"]
        for sid in (from_stdin, from_file)
    }
    assert contents == {"I keep a red kayak in the garage", "My bike is a blue Brompton"}
    _, err = cli("insert", "both", "--file", str(note), expect=2)
    assert "standard input" in err and "--file" in err


def test_a_wrong_token_is_found_when_agentmem_mcp_starts(stack):
    """Not at the first tool call: the host's log says it at once, and the server exits."""
    done = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "mcp"],
        env=_env(stack, token="am_wrong_token"),
        stdin=subprocess.PIPE,  # a host that has not spoken yet
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "does not accept AGENTMEM_TOKEN" in line and "am_wrong_token" not in line


def test_search_bounds_snippets_and_leaves_out_the_long_tail(cli):
    best = json.loads(cli("insert", "I have a red kayak", "--json")[0])["source_id"]
    cli("insert", "kayak " + "x" * 30_000)  # one 30,000-character "word"
    filler = " ".join(f"word{n}" for n in range(200))
    cli("insert", f"{filler} and once a kayak")
    out, err = cli("search", "red kayak", "--json")
    hits = json.loads(out)["hits"]
    assert hits[0]["source_id"] == best
    assert all(len(h["snippet"]) <= 310 for h in hits)
    assert "left out" in err and "--all" in err
    everything = json.loads(cli("search", "red kayak", "--all", "--json")[0])["hits"]
    assert len(everything) == 3 > len(hits)
    assert all(h["score"] >= 0.2 * hits[0]["score"] for h in hits)
