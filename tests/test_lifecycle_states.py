"""Erased is its own state on the wire: GetSource, ListSources and its filters, ListMemories.
The lifecycle's states and explanation reasons are tested on the use cases
(tests/service/test_lifecycle_states.py)."""

from __future__ import annotations

from agentmem.v1 import foreign_pb2, review_pb2, sources_pb2
from tests.memory_helpers import get_source, insert, list_sources

ERASED = sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ERASED
REVOKED = sources_pb2.EFFECTIVE_RETRIEVAL_STATE_REVOKED


def erase(client, source_id, revision):
    return client.EraseSource(
        foreign_pb2.EraseSourceRequest(source_id=source_id, expected_revision=revision)
    )


def revoke(client, source_id):
    return client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=source_id))


def test_an_erased_source_reads_as_erased_not_revoked(stack):
    client = stack.client()
    kept = insert(client, "the kayak is red").source_id
    revoked = insert(client, "the kayak is green").source_id
    revoke(client, revoked)
    erased = insert(client, "the kayak is blue").source_id
    erase(client, erased, 1)

    tomb = get_source(client, erased)
    assert (tomb.status, tomb.effective_retrieval_state) == (sources_pb2.STATUS_ERASED, ERASED)
    assert get_source(client, revoked).effective_retrieval_state == REVOKED

    def listed(**f):
        return {s.source_id: s for s in list_sources(client, **f).sources}

    by_state = listed(effective_state=ERASED)
    assert list(by_state) == [erased]
    assert by_state[erased].status == sources_pb2.STATUS_ERASED
    assert list(listed(effective_state=REVOKED)) == [revoked]
    assert list(listed(status=sources_pb2.STATUS_ERASED)) == [erased]
    # Default listings (and the active status) leave the tombstone out, as pending ones.
    assert set(listed()) == {kept, revoked}
    assert erased not in listed(status=sources_pb2.STATUS_ACTIVE)
    memories = client.ListMemories(
        review_pb2.ListMemoriesRequest(status_filter=review_pb2.MEMORY_STATUS_FILTER_ALL)
    ).memories
    assert {m.source_id: m.status for m in memories}[erased] == sources_pb2.STATUS_ERASED
