"""The README's tour works as printed: its CLI lines find the guitar by meaning, its Python
example finds and injects the memory it saved; the Python client page's example runs too."""

from __future__ import annotations

import re
import shlex

import pytest

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ROOT
from tests.hybrid_support import hybrid_settings, wait_embedded


def _block(page: str, heading: str, language: str) -> str:
    text = (ROOT / page).read_text()
    section = text[text.index(heading) :]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def as_dev(stack_for_tour, monkeypatch):
    monkeypatch.setenv("AGENTMEM_ADDR", stack_for_tour.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    monkeypatch.delenv("AGENTMEM_EXPERIMENTAL", raising=False)
    return stack_for_tour


@pytest.fixture
def stack_for_tour(local_model, vector_backend, make_stack):
    """A stack with the retrieval `make run` serves: words and meaning."""
    return make_stack(**hybrid_settings())


def _run(argv: list[str], capsys) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as e:
        main(argv)
    out = capsys.readouterr()
    assert e.value.code == 0, out.err
    return out.out


def test_the_readme_cli_tour_finds_the_guitar_by_meaning(as_dev, capsys):
    lines = [
        shlex.split(line.split("#")[0])
        for line in _block("README.md", "### The CLI", "sh").splitlines()
        if line.strip()
    ]
    assert [argv[:2] for argv in lines] == [["agentmem", "insert"], ["agentmem", "search"]]
    inserted = _run(lines[0][1:], capsys)
    source_id = re.search(r"src_[A-Za-z0-9_-]+", inserted).group(0)
    wait_embedded(as_dev.client())  # a person types the next line later than this takes
    found = _run(lines[1][1:], capsys)
    assert source_id in found  # "what guitar do I have" shares no word with the memory


def test_the_readme_python_example_runs_as_printed(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    code = _block("README.md", "### Python", "python")
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    hit, *context = out.strip().splitlines()
    assert hit.startswith("src_") and "window seats" in hit
    assert any("I prefer window seats on long flights" in line for line in context)


def test_the_python_client_page_example_runs(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    code = _block("docs/python-client.md", "# Python client", "python")
    exec(compile(code, "python-client.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "1 memory_inserted"
    mode = stack.client().read_thread_memory_mode(thread_id="chat-7")
    assert mode.mode == 2 and mode.revision == 1  # the example disabled the thread


def test_the_docs_examples_run_in_order_on_one_server(stack, monkeypatch, capsys):
    """A newcomer runs the README's example, then the Python client page's, against the same
    fresh server: neither refuses the other's ids."""
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    for path, heading in (
        ("README.md", "### Python"),
        ("docs/python-client.md", "# Python client"),
    ):
        exec(compile(_block(path, heading, "python"), path, "exec"), {})
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 memory_inserted"
    seats = stack.client().search_memories(query="window seats").hits
    assert len(seats) == 2  # each example stored its own memory


def _blocks(text: str, heading: str, language: str) -> list[str]:
    section = text[text.index(heading) :]
    section = section[: section.find("\n## ", 1)]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def test_the_readme_tour_runs_verbatim_from_a_fresh_clone(tmp_path, local_model):
    """The whole tour as a newcomer types it, from a fresh clone: `make run` (with this
    checkout's installed environment, on free ports), the second shell's exports, then
    every CLI line of the tour in order, each output checked."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from agentmem.client import NO_RETRY, Client
    from tests.harness import wait_until

    clone = tmp_path / "agentmem"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    readme = (clone / "README.md").read_text()
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AGENTMEM_DEV_TOKEN": ""}
    for name in ("AGENTMEM_ADDR", "AGENTMEM_TOKEN", "AGENTMEM_EXPERIMENTAL"):
        env.pop(name, None)
    terminal = tmp_path / "terminal.txt"
    with terminal.open("w") as out:
        run = subprocess.Popen(
            # `make run`, without the install step this checkout's environment stands for
            [
                *("make", "-o", ".venv/.installed", "run", f"BIN={bin_dir}"),
                *("LISTEN=127.0.0.1:0", "CONSOLE=127.0.0.1:0"),
            ],
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until(lambda: "call logs in" in terminal.read_text() or run.poll(), 180, "banner")
        banner = [x for x in terminal.read_text().splitlines() if not x.startswith(bin_dir.root)]
        banner = banner[banner.index(next(x for x in banner if "is serving on" in x)) :]
        shown = _blocks(readme, "## A tour", "")[0].splitlines()
        assert [line.split(" ")[:2] for line in banner] == [
            line.split(" ")[:2] for line in shown
        ], banner
        address = re.search(r"serving on (\S+)", banner[0]).group(1)
        exports = _blocks(readme, "## A tour", "sh")[0].replace("127.0.0.1:50051", address)

        def shell(line: str) -> str:
            done = subprocess.run(
                ["bash", "-c", f"{exports}\n{line}"],
                cwd=clone,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, (line, done.stderr)
            return done.stdout

        first, then = _blocks(readme, "### The CLI", "sh")[:2]
        insert, search = [x for x in first.splitlines() if x.strip()]
        source_id = re.search(r"src_[A-Za-z0-9_-]+", shell(insert)).group(0)
        token = (clone / "data" / "dev-token").read_text().strip()
        with Client(address, token, retry=NO_RETRY) as client:
            wait_embedded(client)  # a person types the next line later than this takes
        assert source_id in shell(search)  # found by meaning: no word in common
        outputs = {}
        for line in then.splitlines():
            command = line.split("#")[0].strip().replace("SOURCE_ID", source_id)
            outputs[command] = shell(command)
        explain, prompt, listing, _, after, _, readback = outputs.values()
        assert source_id in explain and source_id in prompt and "Squier" in prompt
        assert source_id in listing and "Squier" not in listing  # never text
        assert source_id not in after  # cold: kept, never retrieved
        assert "clean" in readback
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait(timeout=60)
