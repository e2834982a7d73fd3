"""The source lifecycle through both services: an explanation's response holds no text of
what it filters; every mutation of foreign sources and owner keys writes one event and one
receipt. The lifecycle's rules are tested on the use cases (tests/service/test_lifecycle.py,
test_lifecycle_model.py)."""

from __future__ import annotations

import pytest

from agentmem.v1 import audit_pb2, foreign_pb2, retrieval_pb2
from tests.harness import KEYS
from tests.memory_helpers import explain, insert
from tests.test_foreign import Owner, admit, assent_claims, prepared
from tests.test_review import AGENT, USER


@pytest.fixture
def pending_stack(make_stack):
    return make_stack(
        memory__insert_policy="review_pending",
        auth__api_keys=[k.config() for k in (*KEYS, AGENT, USER)],
    )


def counts(stack, tenant="tenant-a"):
    """(events, receipts) of the tenant's callers' mutations, straight from the database;
    not the runtime's own report of a finished erasure (on PostgreSQL it comes after its
    background VACUUM, at no fixed point in a test)."""
    events = stack.sql(
        "SELECT count(*) FROM events WHERE tenant_id = :t AND kind != 'source_erasure_finished'",
        t=tenant,
    )[0][0]
    receipts = stack.sql(
        "SELECT count(*) FROM audit_receipts WHERE tenant_id = :t"
        " AND action != 'source.erase.finish'",
        t=tenant,
    )
    return events, receipts[0][0]


def test_an_explanation_on_the_wire_holds_no_text_of_what_it_filters(pending_stack):
    agent, admin = pending_stack.client(AGENT), pending_stack.client()
    pending = insert(agent, "the lantern in the attic is zqpending")
    result = explain(admin, "where is the lantern")
    assert [(e.source_id, e.reason) for e in result.entries] == [
        (pending.source_id, retrieval_pb2.REASON_PENDING_REVIEW)
    ]
    raw = result.SerializeToString()
    assert b"attic" not in raw and b"zqpending" not in raw


def test_every_mutation_writes_one_event_and_one_receipt_owner_keys_included(stack):
    client = stack.client()
    owner = Owner(client)  # registers a key
    prep = prepared(client)
    admit(client, owner.sign(assent_claims(prep)))
    client.RevokeAssent(  # an assent that is not the current one
        foreign_pb2.RevokeAssentRequest(source_id=prep.source_id, assent_id="assent-0")
    )
    client.RevokeOwnerKey(foreign_pb2.RevokeOwnerKeyRequest(owner_id="acme-wiki", key_id="k1"))
    events, receipts = counts(stack)
    # register, admit, revoke-assent, invalidate (one source), retire
    assert events == receipts == 5
    kinds = [
        r[0]
        for r in stack.sql("SELECT kind FROM events WHERE tenant_id = 'tenant-a' ORDER BY sequence")
    ]
    assert kinds == [
        "owner_key_registered",
        "foreign_source_admitted",
        "assent_revoked",
        "source_revoked",
        "owner_key_revoked",
    ]
    assert client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest()).ok
