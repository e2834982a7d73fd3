"""Conversations stored before appended messages had rows of their own (0022) keep every
message and their hash across the upgrade, and take appends after it; going back folds the
appended messages into the source row."""

from __future__ import annotations

import json

from tests.memory_helpers import get_source, search
from tests.test_appends import append, start, turns
from tests.test_entry_key_upgrade import _migrate


def _whole(client, source_id):
    s = get_source(client, source_id, include_content=True)
    return [(m.role, m.content) for m in s.messages], s.content_sha256, s.revision


def test_conversations_keep_their_messages_across_the_turn_rows(stack):
    client = stack.client()
    grown = start(client)
    revision = 1
    for text in ("the zqearly turn", "the zqlater turn"):
        revision = append(client, grown.source_id, revision, turns([text])).revision
    plain = start(client, turns(["a zqplain session", "with two messages"]))
    before = {s: _whole(client, s) for s in (grown.source_id, plain.source_id)}
    url = stack.settings.storage.url
    stack.stop(drop=False)

    _migrate(url, "0021", down=True)  # the layout before: every message in the row
    (raw,) = stack.sql("SELECT raw FROM sources WHERE source_id = :s", s=grown.source_id)[0]
    assert [tuple(m) for m in json.loads(raw)] == before[grown.source_id][0]

    stack.start()  # the runtime upgrades the database as it starts
    client = stack.client()
    assert {s: _whole(client, s) for s in before} == before
    sizes = stack.sql(
        "SELECT source_id, message_count, content_chars, turn_rows FROM sources "
        "WHERE source_id IN (:a, :b) ORDER BY source_id",
        a=grown.source_id,
        b=plain.source_id,
    )
    chars = {s: sum(len(c) for _, c in before[s][0]) for s in before}
    assert sorted(sizes) == sorted(
        (s, len(before[s][0]), chars[s], 0) for s in (grown.source_id, plain.source_id)
    )
    done = append(client, grown.source_id, before[grown.source_id][2], turns(["zqafter"]))
    assert done.message_count == 5
    messages, _, _ = _whole(client, grown.source_id)
    assert messages[-1] == ("user", "zqafter") and messages[:4] == before[grown.source_id][0]
    assert search(client, "zqafter").hits[0].passage.message_end == 4
    assert search(client, "zqearly").hits[0].source_id == grown.source_id
