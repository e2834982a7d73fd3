"""The source lifecycle: a revoked or erased source never comes back, every derived record is
found and purged, explanation covers every match, erasure is physical."""

from __future__ import annotations

import os
from pathlib import Path

import grpc
import pytest

from agentmem.v1 import audit_pb2, foreign_pb2, retrieval_pb2, review_pb2, sources_pb2
from tests.harness import KEYS, reason, wait_until
from tests.memory_helpers import assemble, classify, explain, get_source, insert, search_ids
from tests.test_facts import facts
from tests.test_foreign import Owner, admit, assent_claims, prepared, readback
from tests.test_review import AGENT, USER, review

POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
WAVE = "I have a lantern named zqvorpleblatt that glows green"


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


def derived_of(client, source_id):
    return {(d.kind, d.state) for d in readback(client, source_id).derivatives}


@pytest.mark.parametrize("end", ["revoke", "erase"])
def test_approving_a_revoked_or_erased_pending_memory_is_refused(pending_stack, end):
    agent, user = pending_stack.client(AGENT), pending_stack.client(USER)
    admin = pending_stack.client()
    pending = insert(agent, WAVE)
    assert pending.status == sources_pb2.STATUS_PENDING_REVIEW
    if end == "revoke":
        admin.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=pending.source_id))
    else:
        admin.EraseSource(
            foreign_pb2.EraseSourceRequest(source_id=pending.source_id, expected_revision=1)
        )
    assert readback(admin, pending.source_id).clean
    revision = get_source(admin, pending.source_id).revision
    before = counts(pending_stack)

    for decision in (review_pb2.DECISION_APPROVE, review_pb2.DECISION_REJECT):
        with pytest.raises(grpc.RpcError) as e:
            review(user, pending.source_id, revision, decision)
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason(e.value) == ("SOURCE_REVOKED" if end == "revoke" else "SOURCE_ERASED")
    with pytest.raises(grpc.RpcError) as e:
        classify(admin, pending.source_id, revision, sources_pb2.CLASSIFICATION_COLD)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    assert readback(admin, pending.source_id).clean  # still clean: nothing re-derived
    assert get_source(admin, pending.source_id).revision == revision
    assert counts(pending_stack) == before  # refused: no event, no receipt
    assert search_ids(admin, "zqvorpleblatt lantern") == []
    assert facts(admin, "lantern", status=3) == []


def test_an_erased_source_cannot_be_erased_again_but_a_revoked_one_can(stack):
    client = stack.client()
    s = insert(client, WAVE)
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=s.source_id))
    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=2))
    with pytest.raises(grpc.RpcError) as e:
        client.EraseSource(
            foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=3)
        )
    assert reason(e.value) == "SOURCE_ERASED"


def test_explanation_reports_pending_rejected_and_revoked_matches(pending_stack):
    agent, user, admin = (pending_stack.client(k) for k in (AGENT, USER, None))
    pending = insert(agent, "the lantern in the attic is zqpending")
    rejected = insert(agent, "the lantern in the cellar is zqrejected")
    review(user, rejected.source_id, 1, review_pb2.DECISION_REJECT)
    active = insert(agent, "the lantern in the garden", save_intent="explicit_user_request")
    revoked = insert(agent, "the lantern in the shed", save_intent="explicit_user_request")
    admin.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=revoked.source_id))
    erased = insert(agent, "the lantern in the boat", save_intent="explicit_user_request")
    admin.EraseSource(
        foreign_pb2.EraseSourceRequest(source_id=erased.source_id, expected_revision=1)
    )

    result = explain(admin, "where is the lantern")
    reasons = {e.source_id: (e.included, e.reason) for e in result.entries}
    assert reasons == {
        active.source_id: (True, retrieval_pb2.REASON_SELECTED),
        pending.source_id: (False, retrieval_pb2.REASON_PENDING_REVIEW),
        rejected.source_id: (False, retrieval_pb2.REASON_REJECTED),
        revoked.source_id: (False, retrieval_pb2.REASON_REVOKED),
    }
    assert result.total_matches == 4
    raw = result.SerializeToString()
    assert b"attic" not in raw and b"zqpending" not in raw


def test_a_prompt_record_never_cites_a_source_revoked_before_it_committed(stack):
    """Prompt assembly selects, then records: a revocation committed in between makes it
    select again inside the recording transaction."""
    from runtime_svc.domain.caller import Caller
    from runtime_svc.services.clock import system_clock
    from runtime_svc.services.retrieval import Retrieval
    from runtime_svc.services.source_lifecycle import SourceLifecycle
    from runtime_svc.storage.unit_of_work import UnitOfWork

    client = stack.client()
    kept = insert(client, "the lantern on the porch")
    gone = insert(client, "the lantern on the porch swing")
    runtime = stack.runtime.servicer
    lifecycle: SourceLifecycle = runtime._lifecycle
    caller = Caller("tenant-a", "alice", "user", frozenset({"memory.admin"}))

    class RevokingFirst(UnitOfWork):
        """The real unit of work; its first write transaction starts after a revocation
        committed (the interleaving a concurrent RevokeSource would produce)."""

        def __init__(self, real: UnitOfWork) -> None:
            self.__dict__.update(real.__dict__)
            self.revoked = False

        def write(self, tenant_id):  # type: ignore[no-untyped-def]
            if not self.revoked:
                self.revoked = True
                lifecycle.revoke(caller, gone.source_id, "")
            return UnitOfWork.write(self, tenant_id)

    uow = RevokingFirst(runtime._retrieval._uow)
    retrieval = Retrieval(
        uow, system_clock, default_mode=runtime._retrieval._default_mode, posting_budget=20_000
    )
    assembled = retrieval.assemble(caller, "lantern porch", "t1", 500)
    assert [c.source_id for c in assembled.block.cited] == [kept.source_id]
    assert "swing" not in assembled.block.context
    assert readback(client, gone.source_id).clean


def test_the_indexed_document_counter_follows_revoke_and_erase(stack):
    client = stack.client()
    ids = [insert(client, f"lantern number {i}").source_id for i in range(4)]
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=ids[0]))
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=ids[0]))  # again
    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=ids[1], expected_revision=1))
    classify(client, ids[2], 1, sources_pb2.CLASSIFICATION_COLD)
    counter = stack.sql("SELECT indexed_docs FROM tenant_state WHERE tenant_id = 'tenant-a'")
    real = stack.sql(
        "SELECT count(*) FROM sources WHERE tenant_id = 'tenant-a' AND indexed_revision > 0"
    )
    assert counter[0][0] == real[0][0] == 2


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


def test_readback_lists_every_kind_and_what_retrieval_would_return(stack):
    client = stack.client()
    s = insert(client, "I love my lantern", save_intent="explicit_user_request")
    assemble(client, "lantern")
    r = readback(client, s.source_id)
    stored = {d.kind for d in r.derivatives if d.state == "stored"}
    assert stored == {"index_entry", "generated_form", "fact", "fact_index_row", "prompt_record"}
    assert all(d.eligible for d in r.derivatives if d.state == "stored")
    assert ("vector", "purged") in {(d.kind, d.state) for d in r.derivatives}  # embeddings off
    assert set(r.retrievable_by) == {"search", "prompt", "ask", "fact_search", "profile"}
    classify(client, s.source_id, 1, sources_pb2.CLASSIFICATION_COLD)
    r = readback(client, s.source_id)
    assert not any(d.eligible for d in r.derivatives) and list(r.retrievable_by) == []
    assert not r.clean  # cold keeps its derived records
    client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=s.source_id))
    r = readback(client, s.source_id)
    assert r.clean and {d.state for d in r.derivatives} == {"purged"}
    assert {d.kind for d in r.derivatives} >= {"fact_index_row", "prompt_record"}


def _files_hold(db_path: Path, needle: bytes) -> bool:
    return any(
        needle in p.read_bytes() for p in db_path.parent.glob(db_path.name + "*") if p.is_file()
    )


@pytest.mark.skipif(POSTGRES, reason="SQLite files; PostgreSQL erasure is tested below")
def test_erased_words_are_gone_from_the_database_files(stack):
    client = stack.client()
    marker = "zqxerasedwordkvt"
    s = insert(client, f"I like the {marker} lantern", save_intent="explicit_user_request")
    assert facts(client, marker)
    # Suffixes, not the whole word: FTS5 stores terms prefix-compressed.
    assert _files_hold(stack.db_path, marker[3:].encode())
    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=1))
    blobs = stack.sql("SELECT block FROM fact_index_data")
    assert not any(marker[3:].encode() in bytes(b[0] or b"") for b in blobs)
    assert stack.sql("SELECT count(*) FROM search_terms WHERE term LIKE :m", m=f"%{marker[3:]}%")
    assert (
        stack.sql("SELECT count(*) FROM search_terms WHERE term LIKE :m", m=f"%{marker[3:]}%")[0][0]
        == 0
    )
    assert not _files_hold(stack.db_path, marker[3:].encode())
    assert get_source(client, s.source_id).content_sha256 == ""
    r = readback(client, s.source_id)  # scrubbed before the erasure's call returned
    assert r.clean and r.physical_erasure == foreign_pb2.PHYSICAL_ERASURE_COMPLETE
    assert not r.residue and r.HasField("scrubbed_at")


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL only")
def test_erasure_vacuums_the_touched_tables_on_postgresql(stack):
    client = stack.client()
    s = insert(client, "I like the zqxerasedwordkvt lantern")
    client.EraseSource(foreign_pb2.EraseSourceRequest(source_id=s.source_id, expected_revision=1))
    # Readback says which residue is possible (never a plain `complete` on PostgreSQL), and
    # when the runtime's VACUUM of the touched tables finished.
    r = wait_until(lambda: (r := readback(client, s.source_id)).HasField("scrubbed_at") and r, 30)
    assert r.clean and r.physical_erasure == foreign_pb2.PHYSICAL_ERASURE_RESIDUE_POSSIBLE
    assert list(r.residue) == ["data_file_free_space", "wal", "wal_archive_and_replicas"]
    live = stack.sql("SELECT count(*) FROM sources WHERE raw LIKE '%zqxerased%'")
    assert live[0][0] == 0
    assert stack.sql("SELECT count(*) FROM facts WHERE statement LIKE '%zqxerased%'")[0][0] == 0


def test_a_reused_request_id_with_any_other_field_is_refused(stack):
    client = stack.client()
    first = insert(client, WAVE, thread_id="t1", request_id="req-1")
    again = insert(client, WAVE, thread_id="t1", request_id="req-1")
    assert again.source_id == first.source_id and again.deduplicated
    for changed in (
        {"thread_id": "t2"},
        {"labels": {"topic": "other"}},
        {"save_intent": "explicit_user_request"},
    ):
        labels = changed.pop("labels", None)
        with pytest.raises(grpc.RpcError) as e:
            client.InsertMemory(
                sources_pb2.InsertMemoryRequest(
                    content=WAVE,
                    thread_id=changed.get("thread_id", "t1"),
                    request_id="req-1",
                    metadata=sources_pb2.InsertMetadata(
                        labels=labels or {}, save_intent=changed.get("save_intent", "")
                    ),
                )
            )
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason(e.value) == "INVALID_FIELD"


def test_thread_ids_must_be_nfc_normalised(stack):
    import unicodedata

    client = stack.client()
    nfc = unicodedata.normalize("NFC", "café-thread")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    insert(client, WAVE, thread_id=nfc)
    with pytest.raises(grpc.RpcError) as e:
        insert(client, WAVE, thread_id=nfd)
    assert reason(e.value) == "INVALID_FIELD"
    assert b"caf" not in (e.value.details() or "").encode()
