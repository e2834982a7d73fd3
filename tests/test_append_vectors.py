"""An append gives the new messages' passages their vectors and leaves the others' as they
were (never embedded again), with the real local model."""

from __future__ import annotations

from tests.hybrid_support import hybrid_settings, wait_embedded
from tests.test_appends import append, start, turns


def _vectors(stack, source_id):
    return sorted(
        stack.sql(
            "SELECT passage, seq, source_revision FROM memory_vectors WHERE source_id = :s",
            s=source_id,
        )
    )


def _entries(stack, source_id):
    return stack.sql(
        "SELECT count(*) FROM search_postings p JOIN sources s "
        "ON p.pk >= s.pk * 16777216 AND p.pk < (s.pk + 1) * 16777216 "
        "WHERE s.source_id = :sid AND p.term = ''",
        sid=source_id,
    )[0][0]


def test_appended_turns_get_vectors_and_the_others_keep_theirs(
    make_stack, local_model, vector_backend
):
    stack = make_stack(**hybrid_settings())
    client = stack.client()
    s = start(client)
    wait_embedded(client)
    before = _vectors(stack, s.source_id)
    assert len(before) == _entries(stack, s.source_id) == 2
    done = append(client, s.source_id, 1, turns(["My daughter plays the cello every evening."]))
    wait_embedded(client)
    after = _vectors(stack, s.source_id)
    assert set(before) < set(after)  # the same rows: not embedded again
    assert len(after) == _entries(stack, s.source_id) == 3
    assert [r[2] for r in after if r not in before] == [done.revision]
    hits = client.search_memories(query="which string instrument is practised at home").hits
    assert hits and hits[0].source_id == s.source_id
