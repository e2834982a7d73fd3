"""A held save-intent claim as people see it: the console inbox and `agentmem memories list`
show the claimed intent, who claimed it, and that it was held."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentmem.cli.main import main
from agentmem_kernel import config
from tests import test_console
from tests.harness import ADMIN_A, KEYS, LoopThread, Stack, base_settings
from tests.memory_helpers import insert
from tests.test_trusted_intents import AGENT, USER, agent_config

# The console's fixtures, run against this module's stack.
console, browser = test_console.console, test_console.browser
SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("held-stack")
    loop = LoopThread()
    keys = [*(k.config() for k in KEYS), agent_config("client_auto_save"), USER.config()]
    overrides = {"auth.api_keys": keys, "memory.insert_policy": "review_pending"}
    settings = config.load(None, base_settings(tmp / "db.sqlite", **overrides))
    s = Stack(loop, settings, tmp).start()
    yield s
    s.stop()
    loop.close()


@pytest.fixture(scope="module")
def held(stack: Stack) -> str:
    inserted = insert(
        stack.client(AGENT), SQUIER, save_intent="explicit_user_request", save_intent_source="oc"
    )
    assert inserted.save_intent_held
    return inserted.source_id


def test_the_cli_lists_the_held_claim(stack, held, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
    with pytest.raises(SystemExit) as e:
        main(["memories", "list", "--status", "pending_review"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    _count, header, *rows = out.splitlines()
    (line,) = [row for row in rows if held in row]
    # a column per field, each value under its header: who claimed, what, and that it was held
    for column, shown in (
        ("inserted by", "opencode-agent"),
        ("save intent", "explicit_user_request"),
        ("save intent held", "yes"),
    ):
        start = header.index(column)
        assert line[start:].split()[0] == shown, (column, header, line)


def test_the_inbox_shows_who_claimed_what_and_that_it_was_held(
    stack,
    held,
    console,
    browser,
):
    ctx = browser.new_context(base_url=console, viewport={"width": 1200, "height": 900})
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        test_console.sign_in(page, USER)
        card = page.locator(f"li.card[data-source-id='{held}']")
        assert card.locator(".inserted-by").inner_text() == "opencode-agent"
        assert card.locator(".save-intent").inner_text() == "explicit user request"
        note = card.locator(".held").inner_text()
        assert "opencode-agent claimed this save intent" in note and "not trusted" in note
        # a memory pending by policy only carries no such note
        unmarked = insert(stack.client(AGENT), "I like oolong").source_id
        page.reload()
        other = page.locator(f"li.card[data-source-id='{unmarked}']")
        assert other.locator(".save-intent").inner_text() == "none given"
        assert other.locator(".held").count() == 0
    finally:
        ctx.close()
