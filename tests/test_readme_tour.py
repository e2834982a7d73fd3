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
