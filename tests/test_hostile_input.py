"""Hostile input: forged page tokens, keys of unknown algorithms, undecodable and oversized
messages, ambiguous credentials. Each is refused with a catalogued status and ErrorInfo,
never INTERNAL or UNKNOWN, and never with the input echoed back."""

from __future__ import annotations

import base64
import json

import grpc
import pytest

from agentmem.v1 import audit_pb2, foreign_pb2, review_pb2, sources_pb2
from agentmem_kernel import internal_call, paging
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from tests.harness import ADMIN_A, ADMIN_B, INTERNAL_TOKEN, READER_A, metadata_of, reason
from tests.memory_helpers import insert

SERVICE = "/agentmem.v1.MemoryService/"
# SubjectPublicKeyInfo naming an algorithm no library knows (OID 1.2.3.4).
UNKNOWN_ALGORITHM_PEM = (
    "-----BEGIN PUBLIC KEY-----\nMA4wBQYDKgMEAwUAAQIDBA==\n-----END PUBLIC KEY-----\n"
)


def _old_style(position: int) -> str:
    """A token as the server used to issue them: unauthenticated JSON."""
    raw = json.dumps({"q": "0" * 24, "p": position}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _list(client, method: str, token: str):
    if method == "ListSources":
        return client.ListSources(sources_pb2.ListSourcesRequest(page_size=2, page_token=token))
    if method == "ListMemories":
        return client.ListMemories(review_pb2.ListMemoriesRequest(page_size=2, page_token=token))
    return client.ListAuditReceipts(
        audit_pb2.ListAuditReceiptsRequest(page_size=2, page_token=token)
    )


@pytest.mark.parametrize("method", ["ListSources", "ListMemories", "ListAuditReceipts"])
def test_forged_page_tokens_are_invalid_page_token(stack, method):
    a = stack.client(ADMIN_A)
    for i in range(3):
        insert(a, f"memory about rivers {i}")
    genuine = _list(a, method, "").next_page_token
    assert genuine
    body, _, mac = genuine.partition(".")
    forged = [
        _old_style(2**70),
        _old_style(-(2**70)),
        "garbage",
        "a.b.c",
        body + "." + mac[::-1],  # a tampered MAC
        base64.urlsafe_b64encode(b'{"p":"zzzz"}').decode() + "." + mac,  # a moved position
        # A MAC made with the server's own key cannot smuggle an absurd position either.
        paging.encode("no-such-query", 2**70),
        "x" * 600,
    ]
    for token in forged:
        with pytest.raises(grpc.RpcError) as e:
            _list(a, method, token)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, token
        assert reason(e.value) == "INVALID_PAGE_TOKEN", token
        assert token[:20] not in e.value.details()
    # Bound to the tenant: another tenant's use of a genuine token is refused the same way.
    with pytest.raises(grpc.RpcError) as e:
        _list(stack.client(ADMIN_B), method, genuine)
    assert reason(e.value) == "INVALID_PAGE_TOKEN"
    assert _list(a, method, genuine) is not None  # and the genuine one still works


def test_owner_key_of_an_unknown_algorithm_is_invalid_argument(stack):
    with pytest.raises(grpc.RpcError) as e:
        stack.client().RegisterOwnerKey(
            foreign_pb2.RegisterOwnerKeyRequest(
                owner_id="owner", key_id="k1", public_key_pem=UNKNOWN_ALGORITHM_PEM
            )
        )
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(e.value) == "INVALID_FIELD"


def _raw(address: str, method: str, payload: bytes, token: str = ADMIN_A.token):
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(SERVICE + method)  # bytes in, bytes out
        return call(payload, metadata=(("authorization", f"Bearer {token}"),), timeout=10)


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff\xff\xff\xff",  # not a protobuf message
        b"\x12\x02\xc3\x28",  # content (field 2) holding invalid UTF-8
        b"\x12\x05ab",  # a length running past the end
    ],
    ids=["garbage", "invalid-utf8", "truncated"],
)
def test_undecodable_requests_are_malformed_request(stack, payload):
    with pytest.raises(grpc.RpcError) as e:
        _raw(stack.address, "InsertMemory", payload)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(e.value) == "MALFORMED_REQUEST"
    assert "Python" not in e.value.details() and "Exception" not in e.value.details()
    # Authentication still comes first.
    with pytest.raises(grpc.RpcError) as e:
        _raw(stack.address, "InsertMemory", payload, token="not-a-token")
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_undecodable_watch_request_is_malformed_request(stack):
    with grpc.insecure_channel(stack.address) as channel:
        call = channel.unary_stream(SERVICE + "WatchEvents")
        with pytest.raises(grpc.RpcError) as e:
            list(call(b"\xff\xff", metadata=(("authorization", f"Bearer {ADMIN_A.token}"),)))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(e.value) == "MALFORMED_REQUEST"


LIMIT = 128 * 1024


def test_oversized_messages_name_the_limit_on_both_hops(make_stack):
    stack = make_stack(transport__max_message_bytes=LIMIT)
    client = stack.client()
    big = sources_pb2.InsertMemoryRequest(content="x" * (LIMIT + 10))
    with pytest.raises(grpc.RpcError) as e:
        client.InsertMemory(big)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(e.value) == "MESSAGE_TOO_LARGE"
    assert metadata_of(e.value) == {"limit_bytes": str(LIMIT)}
    assert "xxxx" not in e.value.details()
    # The runtime applies the same limit to what reaches it.
    context = rpb.CallContext(tenant_id="tenant-a", principal_id="alice", scopes=["memory.write"])
    with grpc.insecure_channel(stack.runtime_address) as channel:
        call = channel.unary_unary("/agentmem.v1.MemoryService/InsertMemory")
        with pytest.raises(grpc.RpcError) as e:
            call(
                big.SerializeToString(),
                metadata=internal_call.metadata(INTERNAL_TOKEN, context),
                timeout=10,
            )
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert metadata_of(e.value) == {"limit_bytes": str(LIMIT)}
    # A message just under the limit is served.
    assert insert(client, "y" * 1000).source_id


def test_default_limit_refuses_a_ten_megabyte_message_with_error_info(stack):
    with pytest.raises(grpc.RpcError) as e:
        stack.client().InsertMemory(sources_pb2.InsertMemoryRequest(content="x" * 10_000_000))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert metadata_of(e.value) == {"limit_bytes": str(4 * 1024 * 1024)}


def test_oversized_metadata_is_message_too_large_with_error_info(stack):
    """A 20,000-character token: the guard sees it and answers from the catalogue (on
    gRPC's default limits it was RESOURCE_EXHAUSTED without ErrorInfo)."""
    client = stack.client(token="t" * 20_000)
    with pytest.raises(grpc.RpcError) as e:
        client.ListSources(sources_pb2.ListSourcesRequest())
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(e.value) == "MESSAGE_TOO_LARGE"
    assert metadata_of(e.value) == {"limit_bytes": str(16 * 1024), "part": "metadata"}
    assert "tttt" not in e.value.details()


def test_beyond_four_times_the_limits_the_client_names_grpcs_refusal_and_its_limit(make_stack):
    """Past the transport ceiling gRPC refuses before the server reads the message or its
    metadata (reading it whole to answer would let one request take any amount of memory),
    so the status carries no ErrorInfo; the client's one error decoder gives it the
    catalogue's reason and the limit gRPC named."""
    stack = make_stack(transport__max_message_bytes=LIMIT)
    with pytest.raises(grpc.RpcError) as e:
        stack.client().InsertMemory(sources_pb2.InsertMemoryRequest(content="x" * (5 * LIMIT)))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(e.value) == "MESSAGE_TOO_LARGE"
    assert metadata_of(e.value) == {"limit_bytes": str(4 * LIMIT), "refused_by": "server"}
    assert "xxxx" not in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        stack.client(token="t" * 70_000).ListSources(sources_pb2.ListSourcesRequest())
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason(e.value) == "MESSAGE_TOO_LARGE", e.value.details()
    assert metadata_of(e.value)["part"] == "metadata"


@pytest.mark.parametrize(
    "tokens",
    [(READER_A.token, ADMIN_B.token), (ADMIN_A.token, ADMIN_A.token), (ADMIN_A.token, "junk")],
    ids=["reader-then-other-admin", "same-twice", "admin-then-junk"],
)
def test_two_authorization_entries_are_unauthenticated(stack, tokens):
    client = stack.client(token="")
    metadata = tuple(("authorization", f"Bearer {t}") for t in tokens)
    with pytest.raises(grpc.RpcError) as e:
        client.ListSources(sources_pb2.ListSourcesRequest(), metadata=metadata)
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason(e.value) == "UNAUTHENTICATED"
