"""Audit receipts: paging and a hash chain that detects tampering."""

from __future__ import annotations

import grpc
import pytest

from agentmem.v1 import audit_pb2
from tests.harness import ADMIN_B, reason
from tests.test_events import toggle


def verify(client):
    return client.VerifyAuditChain(audit_pb2.VerifyAuditChainRequest())


def test_chain_verifies_and_links(stack):
    client = stack.client()
    toggle(client, 5)
    result = verify(client)
    page = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(page_size=10))
    assert result.ok and result.length == 5 and result.head_hash == page.receipts[-1].hash
    assert [r.prev_hash for r in page.receipts[1:]] == [r.hash for r in page.receipts[:-1]]


def test_changing_one_stored_receipt_breaks_verification(stack):
    client = stack.client()
    toggle(client, 4)
    stack.sql(
        "UPDATE audit_receipts SET principal_id = 'mallory' WHERE sequence = 2 "
        "AND tenant_id = 'tenant-a'"
    )
    result = verify(client)
    assert not result.ok and result.first_invalid_sequence == 2
    assert verify(stack.client(ADMIN_B)).ok  # other tenants' chains are their own


def test_removing_the_newest_receipt_breaks_verification(stack):
    client = stack.client()
    toggle(client, 3)
    stack.sql("DELETE FROM audit_receipts WHERE sequence = 3 AND tenant_id = 'tenant-a'")
    assert not verify(client).ok


def test_paging_with_opaque_tokens(stack):
    client = stack.client()
    toggle(client, 5, thread_id="a")
    toggle(client, 2, thread_id="b")
    seen, token = [], ""
    while True:
        page = client.ListAuditReceipts(
            audit_pb2.ListAuditReceiptsRequest(target_id="a", page_size=2, page_token=token)
        )
        seen += [(r.target_id, r.target_revision) for r in page.receipts]
        token = page.next_page_token
        if not token:
            break
    assert seen == [("a", i) for i in range(1, 6)]
    # a token is bound to its query and tenant
    first = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest(target_id="a", page_size=2))
    for c, target in ((client, "b"), (stack.client(ADMIN_B), "a")):
        with pytest.raises(grpc.RpcError) as e:
            c.ListAuditReceipts(
                audit_pb2.ListAuditReceiptsRequest(
                    target_id=target, page_size=2, page_token=first.next_page_token
                )
            )
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason(e.value) == "INVALID_PAGE_TOKEN"
