"""Entry keys of the previous layout (a passage's first and last message in 8 bits each)
move to the session layout (first message in 18 bits, length in 6) with every passage kept
and readable, and back."""

from __future__ import annotations

from alembic import command
from sqlalchemy import create_engine

from agentmem.v1 import retrieval_pb2
from runtime_svc.storage.db import sqlite_engine
from runtime_svc.storage.migrate import alembic_config
from tests.test_appends import start, turns
from tests.test_passages import insert_conversation


def _migrate(url: str, target: str, down: bool) -> None:
    engine = sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, target)
    engine.dispose()


def _passages(client, query):
    hits = client.SearchMemories(
        retrieval_pb2.SearchMemoriesRequest(query=query, limit=20, group_by_source=False)
    ).hits
    return sorted((h.source_id, h.passage.message_start, h.passage.message_end) for h in hits)


def _keys(stack):
    return sorted(r[0] for r in stack.sql("SELECT pk FROM search_postings WHERE term = ''"))


def test_passages_stay_readable_across_the_key_layouts(stack):
    client = stack.client()
    conversation = insert_conversation(client)
    plain = start(client, turns(["the zqplain session about the zqcello"]))
    before = _passages(client, "zqcello grandmother scroll")
    keys = _keys(stack)
    assert len(before) >= 2 and plain.source_id in {sid for sid, _, _ in before}
    url = stack.settings.storage.url
    stack.stop(drop=False)

    _migrate(url, "0019", down=True)
    old = _keys(stack)
    assert [k >> 16 for k in old] == sorted(k >> 24 for k in keys)  # the old layout's sources
    assert all((k & 0xFFFF) == 0 or (k & 0xFF) > (k >> 8 & 0xFF) for k in old)

    stack.start()  # the runtime upgrades the database as it starts
    client = stack.client()
    assert _keys(stack) == keys
    assert _passages(client, "zqcello grandmother scroll") == before
    assert conversation.source_id in {sid for sid, _, _ in before}
