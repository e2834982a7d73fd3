"""The README's Python client example runs as printed."""

from __future__ import annotations

import re

from tests.harness import ADMIN_A, ROOT


def test_the_python_client_example_runs(stack, monkeypatch, capsys):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Python client") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.strip() == "1 memory_inserted"
    mode = stack.client().read_thread_memory_mode(thread_id="chat-7")
    assert mode.mode == 2 and mode.revision == 1  # the example disabled the thread
