"""Foreign sources, assent, revocation with readback, erasure."""

from __future__ import annotations

import base64
import hashlib
import json
import time

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentmem.v1 import audit_pb2, events_pb2, foreign_pb2, sources_pb2
from tests.harness import ADMIN_A, ADMIN_B, reason
from tests.memory_helpers import assemble, get_source, insert, list_sources, search_ids
from tests.test_facts import SQUIER, facts

OWNER = "acme-wiki"
DIGEST = hashlib.sha256(b"the owner's document").hexdigest()
POINTER = foreign_pb2.ThinPointer(
    uri="https://wiki.acme.example/pages/42",
    content_digest=DIGEST,
    media_type="text/html",
    title="Quarterly kayak roster",
    descriptor="Who paddles on which weekend",
)
SECRET_WORDS = (b"kayak", b"roster", b"paddles")


class Owner:
    def __init__(self, client, key_id="k1"):
        self.key = Ed25519PrivateKey.generate()
        self.key_id = key_id
        pem = (
            self.key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        client.RegisterOwnerKey(
            foreign_pb2.RegisterOwnerKeyRequest(owner_id=OWNER, key_id=key_id, public_key_pem=pem)
        )

    def sign(self, claims, key=None, headers=None):
        return jwt.encode(
            claims, key or self.key, algorithm="EdDSA", headers=headers or {"kid": self.key_id}
        )


def prepared(client, pointer=POINTER):
    return client.PrepareForeignSource(
        foreign_pb2.PrepareForeignSourceRequest(canonical_owner=OWNER, pointer=pointer)
    )


def assent_claims(prep, **over):
    now = int(time.time())
    return {
        "iss": OWNER,
        "sub": prep.source_id,
        "aud": prep.audience,
        "digest": DIGEST,
        "iat": now,
        "exp": now + 3600,
        "jti": "assent-1",
        **over,
    }


def admit(client, token, pointer=POINTER, body=""):
    return client.AdmitForeignSource(
        foreign_pb2.AdmitForeignSourceRequest(
            canonical_owner=OWNER, pointer=pointer, assent=token, body=body
        )
    )


def readback(client, source_id):
    return client.ReadbackSource(foreign_pb2.ReadbackSourceRequest(source_id=source_id))


@pytest.fixture
def setup(stack):
    client = stack.client()
    owner = Owner(client)
    return client, owner, prepared(client)


def test_a_valid_thin_pointer_is_admitted_under_its_derived_identity(setup):
    client, owner, prep = setup
    assert prep.source_id.startswith("fsrc_") and prep.audience == "tenant-a"
    assert prepared(client).source_id == prep.source_id  # the identity never changes
    r = admit(client, owner.sign(assent_claims(prep)))
    assert (r.source_id, r.revision) == (prep.source_id, 1)
    assert r.effective_retrieval_state == sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE
    assert search_ids(client, "kayak roster") == [prep.source_id]
    assert get_source(client, prep.source_id).source_kind == sources_pb2.SOURCE_KIND_FOREIGN


def _alg_none(prep):
    head = base64.urlsafe_b64encode(json.dumps({"alg": "none", "kid": "k1"}).encode())
    body = base64.urlsafe_b64encode(json.dumps(assent_claims(prep)).encode())
    return (head.rstrip(b"=") + b"." + body.rstrip(b"=") + b".").decode()


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "other_key",
        "alg_none",
        "hs256",
        "expired",
        "wrong_subject",
        "wrong_audience",
        "wrong_issuer",
        "stale_digest",
        "unknown_kid",
    ],
)
def test_admission_without_valid_assent_creates_nothing(setup, case):
    client, owner, prep = setup
    tokens = {
        "missing": ("", "ASSENT_MISSING"),
        "other_key": (
            owner.sign(assent_claims(prep), key=Ed25519PrivateKey.generate()),
            "ASSENT_INVALID",
        ),
        "alg_none": (_alg_none(prep), "ASSENT_INVALID"),
        "hs256": (
            jwt.encode(assent_claims(prep), "s" * 32, algorithm="HS256", headers={"kid": "k1"}),
            "ASSENT_INVALID",
        ),
        "expired": (owner.sign(assent_claims(prep, exp=int(time.time()) - 5)), "ASSENT_EXPIRED"),
        "wrong_subject": (owner.sign(assent_claims(prep, sub="fsrc_other")), "ASSENT_INVALID"),
        "wrong_audience": (owner.sign(assent_claims(prep, aud="tenant-b")), "ASSENT_INVALID"),
        "wrong_issuer": (owner.sign(assent_claims(prep, iss="mallory")), "ASSENT_INVALID"),
        "stale_digest": (owner.sign(assent_claims(prep, digest="0" * 64)), "ASSENT_STALE"),
        "unknown_kid": (owner.sign(assent_claims(prep), headers={"kid": "nope"}), "ASSENT_INVALID"),
    }
    token, expected = tokens[case]
    with pytest.raises(grpc.RpcError) as e:
        admit(client, token)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED and reason(e.value) == expected
    assert list_sources(client).sources == [] and search_ids(client, "kayak") == []
    with pytest.raises(grpc.RpcError) as e:
        get_source(client, prep.source_id)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    denial = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest()).receipts[-1]
    assert (denial.action, denial.target_id) == ("foreign_source.deny", prep.source_id)


def test_thin_pointer_only(setup):
    client, owner, prep = setup
    token = owner.sign(assent_claims(prep))
    too_long = foreign_pb2.ThinPointer()
    too_long.CopyFrom(POINTER)
    too_long.descriptor = "x" * 501
    bad_digest = foreign_pb2.ThinPointer()
    bad_digest.CopyFrom(POINTER)
    bad_digest.content_digest = "abc"
    for pointer, body in ((POINTER, "the whole document text"), (too_long, ""), (bad_digest, "")):
        with pytest.raises(grpc.RpcError) as e:
            admit(client, token, pointer=pointer, body=body)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason(e.value) == "THIN_POINTER_REQUIRED"
    assert list_sources(client).sources == []


def test_assent_expiring_later_stops_retrieval_from_that_moment(setup):
    client, owner, prep = setup
    expires = int(time.time()) + 2
    admit(client, owner.sign(assent_claims(prep, exp=expires)))
    assert search_ids(client, "kayak") == [prep.source_id]
    while time.time() < expires + 0.05:  # the feature under test is the passing of time
        time.sleep(0.05)
    assert search_ids(client, "kayak") == []
    state = get_source(client, prep.source_id).effective_retrieval_state
    assert state == sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ASSENT_EXPIRED


def test_revocation_stops_retrieval_at_once_and_readback_comes_clean(setup):
    client, owner, prep = setup
    admit(client, owner.sign(assent_claims(prep)))
    ordinary = insert(client, "The user keeps a kayak in the garage").source_id
    prompt = assemble(client, "kayak")
    assert {c.source_id for c in prompt.citations} == {prep.source_id, ordinary}
    before = readback(client, prep.source_id)
    assert not before.clean
    assert {d.kind for d in before.derivatives if d.state == "stored"} == {
        "index_entry",
        "generated_form",
        "prompt_record",
    }

    r = client.RevokeSource(
        foreign_pb2.RevokeSourceRequest(source_id=prep.source_id, reason="owner asked")
    )
    assert r.effective_retrieval_state == sources_pb2.EFFECTIVE_RETRIEVAL_STATE_REVOKED
    assert search_ids(client, "kayak") == [ordinary]  # unrelated sources keep their results
    assert [c.source_id for c in assemble(client, "kayak").citations] == [ordinary]
    after = readback(client, prep.source_id)
    assert after.clean and all(d.state == "purged" and not d.eligible for d in after.derivatives)
    with pytest.raises(grpc.RpcError) as e:  # a revoked identity is not admitted again
        admit(client, owner.sign(assent_claims(prep, jti="assent-2")))
    assert reason(e.value) == "ASSENT_REVOKED"


def test_revoking_the_assent_by_the_owner_or_an_admin(stack):
    client = stack.client()
    owner = Owner(client)
    prep = prepared(client)
    admit(client, owner.sign(assent_claims(prep)))
    revocation = owner.sign(
        {"iss": OWNER, "sub": prep.source_id, "jti": "assent-1", "action": "revoke"}
    )
    r = client.RevokeAssent(
        foreign_pb2.RevokeAssentRequest(
            source_id=prep.source_id, assent_id="assent-1", revocation=revocation
        )
    )
    assert r.effective_retrieval_state == sources_pb2.EFFECTIVE_RETRIEVAL_STATE_REVOKED
    assert search_ids(client, "kayak") == [] and readback(client, prep.source_id).clean
    # a forged revocation is refused
    with pytest.raises(grpc.RpcError) as e:
        client.RevokeAssent(
            foreign_pb2.RevokeAssentRequest(
                source_id=prep.source_id,
                assent_id="assent-1",
                revocation=owner.sign(
                    {"iss": OWNER, "sub": prep.source_id, "jti": "assent-1", "action": "revoke"},
                    key=Ed25519PrivateKey.generate(),
                ),
            )
        )
    assert reason(e.value) == "ASSENT_INVALID"


def test_a_revoked_assent_id_is_never_accepted_again(stack):
    client = stack.client()
    owner = Owner(client)
    other = foreign_pb2.ThinPointer()
    other.CopyFrom(POINTER)
    other.uri = "https://wiki.acme.example/pages/43"
    prep = prepared(client, other)
    first = prepared(client)
    admit(client, owner.sign(assent_claims(first, jti="assent-9")))
    client.RevokeAssent(
        foreign_pb2.RevokeAssentRequest(source_id=first.source_id, assent_id="assent-9")
    )  # admin
    with pytest.raises(grpc.RpcError) as e:
        admit(client, owner.sign(assent_claims(prep, jti="assent-9")), pointer=other)
    assert reason(e.value) == "ASSENT_REVOKED"


def test_retiring_the_owners_key_makes_its_assents_stale_at_once(setup):
    client, owner, prep = setup
    legacy = client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content="Legacy note: the kayak club meets on Fridays",
            source_kind=sources_pb2.SOURCE_KIND_LEGACY,
        )
    ).source_id
    admit(client, owner.sign(assent_claims(prep)))
    r = client.RevokeOwnerKey(foreign_pb2.RevokeOwnerKeyRequest(owner_id=OWNER, key_id="k1"))
    assert r.sources_affected == 1
    assert search_ids(client, "kayak") == [legacy]  # legacy sources are unaffected
    assert get_source(client, prep.source_id).effective_retrieval_state == (
        sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ASSENT_INVALID
    )
    with pytest.raises(grpc.RpcError) as e:
        admit(client, owner.sign(assent_claims(prep, jti="assent-3")))
    assert reason(e.value) == "ASSENT_STALE"


def test_erasure_sticks_for_any_source(stack):
    client = stack.client()
    s = insert(client, SQUIER, save_intent="explicit_user_request")
    assemble(client, "Squier")
    assert facts(client, "Squier")
    with pytest.raises(grpc.RpcError) as e:
        client.EraseSource(
            foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=9)
        )
    assert reason(e.value) == "REVISION_MISMATCH"
    r = client.EraseSource(
        foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=1)
    )
    assert r.receipt.action == "source.erase"
    assert readback(client, s.source_id).clean
    assert facts(client, "Squier", status=3) == [] and search_ids(client, "Squier") == []
    tomb = get_source(client, s.source_id, include_content=True)
    assert tomb.content == "" and tomb.content_sha256 == ""  # ids only, no hash of the content
    # Erased is its own state, never read as revoked.
    assert tomb.effective_retrieval_state == sources_pb2.EFFECTIVE_RETRIEVAL_STATE_ERASED
    assert tomb.status == sources_pb2.STATUS_ERASED


def test_events_and_receipts_carry_no_pointer_text(setup):
    client, owner, prep = setup
    with pytest.raises(grpc.RpcError):
        admit(client, "")
    admit(client, owner.sign(assent_claims(prep)))
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=prep.source_id))
    receipts = client.ListAuditReceipts(audit_pb2.ListAuditReceiptsRequest()).receipts
    stream = client.WatchEvents(events_pb2.WatchEventsRequest())
    events = []
    for item in stream:
        events.append(item.event)
        if item.event.HasField("source_revoked"):
            break
    stream.cancel()
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == [
        "owner_key_registered",
        "foreign_source_denied",
        "foreign_source_admitted",
        "source_revoked",
    ]
    raw = b"".join(x.SerializeToString() for x in [*receipts, *events])
    for word in SECRET_WORDS:
        assert word not in raw


def test_other_tenants_cannot_touch_it(setup, stack):
    client, owner, prep = setup
    admit(client, owner.sign(assent_claims(prep)))
    b = stack.client(ADMIN_B)
    for call in (
        lambda: readback(b, prep.source_id),
        lambda: b.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=prep.source_id)),
    ):
        with pytest.raises(grpc.RpcError) as e:
            call()
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert ADMIN_A.tenant == "tenant-a"
