"""An explanation names the passage of each ranked conversation that matched (the one search
returns), and of a long message the part that shares the query's words; plain-text memories
and filtered sources carry none."""

from __future__ import annotations

from runtime_svc.domain.passages import Part, Range
from runtime_svc.domain.sources import Message, SaveIntent
from runtime_svc.services.inserts import InsertCommand
from tests.service.lifecycle_support import A

MARKED = SaveIntent("explicit_user_request")


def _conversation(cases, said):
    messages = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(said)]
    return cases.inserts.insert(A, InsertCommand(messages=messages, intent=MARKED)).source_id


def test_a_ranked_conversation_names_the_messages_that_matched(service):
    said = [f"Small talk number {i} about nothing much" for i in range(20)]
    said[12] = "My bicycle zqfrobnitz has a squeaky chain"
    said[13] = "Oil the chain of the zqfrobnitz bicycle"
    sid = _conversation(service, said)
    plain = service.inserts.insert(
        A, InsertCommand(content="The zqfrobnitz is stored in the shed", intent=MARKED)
    ).source_id

    entries = {e.source_id: e for e in service.retrieval.explain(A, "zqfrobnitz", "", 5).entries}
    hit = service.retrieval.search(A, "zqfrobnitz", "", 5)
    assert entries[sid].passage == next(f.passage for f in hit if f.source_id == sid)
    assert entries[sid].passage is not None and 12 <= entries[sid].passage.end <= 13
    assert entries[sid].part is None
    assert entries[plain].passage is None and entries[plain].rank


def test_a_long_message_is_named_by_its_part_that_matched(service):
    filler = "\n\n".join(f"Paragraph {i} is about the weather and the garden." for i in range(60))
    long_reply = f"{filler}\n\nThe zqwidget firmware must be flashed with version nine.\n\n{filler}"
    sid = _conversation(service, ["How do I update the zqwidget?", long_reply, "Thanks"])

    entry = next(
        e
        for e in service.retrieval.explain(A, "zqwidget firmware flashed", "", 5).entries
        if e.source_id == sid
    )
    assert entry.passage == Range(1, 1)
    assert isinstance(entry.part, Part) and entry.part.end - entry.part.start < len(long_reply)
    assert "firmware must be flashed" in long_reply[entry.part.start : entry.part.end]
