"""Input the CLI cannot send: a number past the range of the field it fills (its proto
type decides: int32, int64), or an argument whose bytes are not UTF-8. Each is a usage
error naming the option (exit code 2, as argparse's own), never a traceback; nothing is
sent, nothing stored."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ROOT

INT64_PAST = str(2**63)
INT32_PAST = str(2**31)


@pytest.fixture
def cli(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)

    def run(*argv: str, expect: int = 0) -> str:
        with pytest.raises(SystemExit) as e:
            main(list(argv))
        out = capsys.readouterr()
        assert e.value.code == expect, out.err
        return out.err

    return run


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (
            ("sources", "classify", "src_x", "cold", "--expected-revision", INT64_PAST),
            "--expected-revision",
        ),
        (
            ("sources", "erase", "src_x", "--expected-revision", str(-(2**63) - 1)),
            "--expected-revision",
        ),
        (
            ("memories", "review", "src_x", "approve", "--expected-revision", str(2**64)),
            "--expected-revision",
        ),
        (
            ("thread-mode", "set", "t1", "disabled", "--expected-revision", INT64_PAST),
            "--expected-revision",
        ),
        (("policy", "set", "permissive", "--expected-revision", INT64_PAST), "--expected-revision"),
        (("search", "kayak", "--limit", INT32_PAST), "--limit"),
        (("explain", "kayak", "--limit", str(-(2**31) - 1)), "--limit"),
        (("prompt", "kayak", "--budget", INT32_PAST), "--budget"),
        (("ask", "which kayak", "--budget", INT64_PAST), "--budget"),
        (("sources", "list", "--page-size", INT32_PAST), "--page-size"),
        (("audit", "list", "--page-size", INT32_PAST), "--page-size"),
        (("watch", "--after", INT64_PAST), "--after"),
        (("watch", "--limit", INT64_PAST), "--limit"),
        (("import", "memories.jsonl", "--in-flight", INT64_PAST), "--in-flight"),
        (("mcp", "--port", str(2**70)), "--port"),
        (("search", "kayak", "--limit", "many"), "--limit"),
    ],
    ids=lambda v: " ".join(v[:2]) if isinstance(v, tuple) else v,
)
def test_a_number_past_its_fields_range_is_a_usage_error(cli, stack, argv, option):
    err = cli(*argv, expect=2)
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "error:" in x]
    assert f"argument {option}:" in line and "whole number" in line
    assert stack.sql("SELECT count(*) FROM audit_receipts") == [(0,)]


def _env(stack) -> dict[str, str]:
    return {**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token}


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        ([b"insert", b"I have a \xff kayak"], "content"),
        ([b"search", b"kayak", b"--thread", b"t\xff"], "--thread"),
        ([b"sources", b"get", b"src_\xc3\x28"], "source_id"),
    ],
    ids=["insert", "search --thread", "sources get"],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(stack, argv, named):
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"agentmem.cli.main", *argv],
        cwd=ROOT,
        env=_env(stack),
        capture_output=True,
        timeout=60,
    )
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert named in line and "UTF-8" in line
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]


def test_standard_input_that_is_not_utf8_is_a_usage_error(stack):
    done = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "insert", "-"],
        input=b"I have a \xff kayak\n",
        cwd=ROOT,
        env=_env(stack),
        capture_output=True,
        timeout=60,
    )
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err and "standard input" in err and "UTF-8" in err
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]


def test_a_time_outside_years_1_to_9999_in_utc_is_a_usage_error(cli, stack):
    err = cli("facts", "search", "live", "--as-of", "0001-01-01T00:00:00+01:00", expect=2)
    assert "Traceback" not in err and "argument --as-of:" in err
    err = cli("insert", "I live here", "--observed-at", "9999-12-31T23:59:59-01:00", expect=2)
    assert "Traceback" not in err and "argument --observed-at:" in err
    assert stack.sql("SELECT count(*) FROM sources") == [(0,)]
