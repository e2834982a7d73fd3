"""The console's "Why was this retrieved?" page and long conversations, in a real browser
against a real gateway and runtime: each ranked conversation shows the passage that matched
(a long message by the characters that matched), marked, what found it and its score's
parts; a 500-turn conversation folds around its first, last and matched turns."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentmem.v1 import retrieval_pb2, sources_pb2
from agentmem_kernel import config
from tests import browser as chromium
from tests.harness import ADMIN_A, KEYS, Key, LoopThread, Process, Stack, base_settings

AGENT = Key(
    "tok-explain-agent", "explain-agent", "tenant-a", ("memory.read", "memory.write"), kind="agent"
)
WAIT_MS = 15_000
MARKED = sources_pb2.InsertMetadata(save_intent="explicit_user_request")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("explain-stack")
    loop = LoopThread()
    overrides = {
        "memory.insert_policy": "review_pending",
        "auth.api_keys": [k.config() for k in (*KEYS, AGENT)],
    }
    s = Stack(loop, config.load(None, base_settings(tmp / "db.sqlite", **overrides)), tmp).start()
    yield s
    s.stop()
    loop.close()


@pytest.fixture(scope="module")
def page(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("explain-console")
    proc = Process(["console", "--listen", "127.0.0.1:0", "--addr", stack.address], {}, tmp, "c")
    browsers = chromium.browser()
    b = next(browsers)
    ctx = b.new_context(
        base_url=f"http://127.0.0.1:{proc.port}", viewport={"width": 1200, "height": 900}
    )
    ctx.set_default_timeout(WAIT_MS)
    p = ctx.new_page()
    p.goto("/sign-in")
    p.get_by_label("Credential").fill(ADMIN_A.token)
    p.get_by_role("button", name="Sign in").click()
    p.wait_for_url("**/inbox")
    yield p
    ctx.close()
    browsers.close()
    proc.terminate()


def conversation(client: Any, said: list[str], metadata: Any = MARKED) -> str:
    messages = [
        sources_pb2.Message(role="user" if i % 2 == 0 else "assistant", content=t)
        for i, t in enumerate(said)
    ]
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(messages=messages, metadata=metadata)
    ).source_id


def passage_of(client: Any, query: str, source_id: str) -> retrieval_pb2.Passage:
    hits = client.SearchMemories(retrieval_pb2.SearchMemoriesRequest(query=query, limit=10)).hits
    return next(h.passage for h in hits if h.source_id == source_id)


def test_why_retrieved_shows_the_passage_that_matched_how_and_its_score(
    stack: Stack, page: Any
) -> None:
    admin = stack.client(ADMIN_A)
    said = [f"Small talk {i} about the weather today" for i in range(60)]
    said[0] = "Hi, I'm starting work on the garden shed"
    said[12] = "I keep my zqmarimba mallets in <b>the blue case</b>\u200b"
    said[13] = "Then the zqmarimba mallets are safe there"
    chat = conversation(admin, said)
    filler = "\n\n".join(f"Paragraph {i} is about the weather and the garden." for i in range(60))
    long_reply = f"{filler}\n\nFlash the zqmarimba tuner firmware to version nine.\n\n{filler}"
    long_chat = conversation(admin, ["How do I update the tuner?", long_reply, "Thanks"])
    held = conversation(stack.client(AGENT), ["My zqmarimba is on loan", "Noted"], None)

    page.goto("/explain?q=zqmarimba+mallets")
    row = page.locator(f"#explanation tr[data-source-id='{chat}']")
    p = passage_of(admin, "zqmarimba mallets", chat)
    where = f"messages {p.message_start + 1} to {p.message_end + 1}"
    assert row.locator(".where").inner_text() == where
    assert row.locator(".first-line").inner_text().startswith("user: Hi, I'm starting work")
    marked = row.locator(".passage .turn.matched")
    assert marked.count() == p.message_end - p.message_start + 1
    text = row.locator(".passage").inner_text()
    assert "zqmarimba mallets" in text and "Small talk" not in text.replace(where, "")
    # Stored markup is text, and invisible characters are written out.
    assert "<b>the blue case</b>U+200B" in text and row.locator(".passage b").count() == 0
    assert set(row.locator(".passage mark").all_inner_texts()) == {"zqmarimba", "mallets"}
    assert row.locator(".matched-by").inner_text() == "matched by its words"
    assert row.locator(".score-parts").inner_text() == "BM25 of its words"

    held_row = page.locator(f"#explanation tr[data-source-id='{held}']")
    assert held_row.locator(".matched-by").inner_text() == "held for review; matched by its words"
    assert held_row.locator(".score-parts").count() == 0 and held_row.locator(".where").count() == 0

    page.goto("/explain?q=zqmarimba+tuner+firmware")
    row = page.locator(f"#explanation tr[data-source-id='{long_chat}']")
    assert row.locator(".where").inner_text().startswith("message 2, characters ")
    shown = row.locator(".passage").inner_text()
    assert "Flash the zqmarimba tuner firmware to version nine." in shown
    assert shown.startswith("2.") or shown.startswith("assistant: …"), shown
    assert len(shown) < 500  # an excerpt of the part, not the 6,000-character message
    marks = row.locator(".passage mark").all_inner_texts()
    assert {"zqmarimba", "tuner", "firmware"} <= set(marks)
    chromium_shot(page, "explain-passages")
    assert chromium.axe_violations(page) == []
    # Its link opens the message with the part that matched marked.
    row.locator(".where").click()
    page.wait_for_url(f"**/sources/{long_chat}?passage=1-1:*")
    part = page.locator("#m-2 mark").inner_text()
    assert "Flash the zqmarimba tuner firmware" in part and len(part) < len(long_reply)

    # The passage's link opens the conversation at it, marked, the rest folded.
    page.goto("/explain?q=zqmarimba+mallets")
    page.locator(f"#explanation tr[data-source-id='{chat}'] .where").click()
    page.wait_for_url(f"**/sources/{chat}?passage=*")
    assert page.locator(f"#m-{p.message_end + 1}.matched").is_visible()
    assert page.locator("#m-1").is_visible() and page.locator("#m-60").is_visible()
    assert page.locator("#m-30").is_visible() is False  # folded


def test_a_500_turn_conversation_folds_on_its_source_and_review_pages(
    stack: Stack, page: Any
) -> None:
    said = [f"Turn {i} of a very long session about zqoboe reeds" for i in range(500)]
    said[-1] = "The newest turn: zqoboe reeds arrive Friday"
    sid = conversation(stack.client(AGENT), said, None)  # waits for review

    started = time.monotonic()
    page.goto(f"/sources/{sid}")
    assert time.monotonic() - started < 10
    turns = page.locator("ol.messages li.turn")
    assert turns.count() == 500  # all there, most folded
    visible = sum(1 for i in (1, 2, 3, 250, 498, 499, 500) if page.locator(f"#m-{i}").is_visible())
    assert visible == 5  # the first two and last three
    summary = page.locator("li.fold summary")
    assert summary.all_inner_texts() == ["show 495 more (messages 3 to 497)"]
    assert page.evaluate("document.documentElement.scrollHeight") < 2500
    chromium_shot(page, "long-conversation-folded")
    assert chromium.axe_violations(page) == []
    summary.click()
    assert page.locator("#m-250").is_visible()

    page.goto("/inbox")
    card = page.locator(f"li.card[data-source-id='{sid}']")
    assert card.locator("li.fold summary").inner_text() == "show 495 more (messages 3 to 497)"
    assert "The newest turn: zqoboe reeds arrive Friday" in card.inner_text()


def chromium_shot(page: Any, name: str) -> None:
    shots = chromium.OUTPUT / "console"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
