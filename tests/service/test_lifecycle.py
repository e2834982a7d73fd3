"""The source lifecycle on the use cases: a revoked or erased source never comes back, every
derived record is found and purged, explanation covers every match, erasure is physical,
a request id names one insert."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from agentmem.contract.errors import AgentmemError
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.erasure import Physical
from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import SaveIntent
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.services.clock import system_clock
from runtime_svc.services.facts import FactQuery
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import wait_until
from tests.service.lifecycle_support import COLD, A, classify, erase, readback, review, revoke
from tests.service.wiring import caller, reason
from tests.test_review import AGENT, USER

POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))
WAVE = "I have a lantern named zqvorpleblatt that glows green"
MARKED = SaveIntent("explicit_user_request")
UNMARKED = SaveIntent()


def insert(cases, text, who: Caller = A, intent=UNMARKED, thread_id="", labels=None):
    cmd = InsertCommand(content=text, intent=intent, thread_id=thread_id, labels=labels or {})
    return cases.inserts.insert(who, cmd)


def counts(service, tenant="tenant-a"):
    """(events, receipts) of the tenant's callers' mutations, straight from the database;
    not the runtime's own report of a finished erasure (on PostgreSQL it comes after its
    background VACUUM, at no fixed point in a test)."""
    events = service.sql(
        "SELECT count(*) FROM events WHERE tenant_id = :t AND kind != 'source_erasure_finished'",
        t=tenant,
    )[0][0]
    receipts = service.sql(
        "SELECT count(*) FROM audit_receipts WHERE tenant_id = :t"
        " AND action != 'source.erase.finish'",
        t=tenant,
    )
    return events, receipts[0][0]


def search_ids(cases, query):
    return [f.source_id for f in cases.retrieval.search(A, query, "", 10)]


@pytest.mark.parametrize("end", ["revoke", "erase"])
def test_approving_a_revoked_or_erased_pending_memory_is_refused(make_service, end):
    made = make_service(memory__insert_policy="review_pending")
    cases = made.cases
    pending = insert(cases, WAVE, caller(AGENT))
    assert pending.status == "pending_review"
    if end == "revoke":
        revoke(cases, pending.source_id)
    else:
        erase(cases, pending.source_id, 1)
    # Its files' scrub may be left to the background when a reader was in the way.
    wait_until(lambda: readback(cases, pending.source_id).clean, 30, "erasure finished")
    revision = cases.reads.get(A, pending.source_id, False)[0].revision
    before = counts(made)

    for decision in (Decision.APPROVE, Decision.REJECT):
        with pytest.raises(AgentmemError) as e:
            review(cases, caller(USER), pending.source_id, revision, decision)
        assert reason(e.value) == ("SOURCE_REVOKED" if end == "revoke" else "SOURCE_ERASED")
    with pytest.raises(AgentmemError) as e:
        classify(cases, pending.source_id, revision, COLD)
    assert reason(e.value) == ("SOURCE_REVOKED" if end == "revoke" else "SOURCE_ERASED")

    assert readback(cases, pending.source_id).clean  # still clean: nothing re-derived
    assert cases.reads.get(A, pending.source_id, False)[0].revision == revision
    assert counts(made) == before  # refused: no event, no receipt
    assert search_ids(cases, "zqvorpleblatt lantern") == []
    assert cases.facts.search(A, FactQuery(query="lantern", state="all")) == []


def test_an_erased_source_cannot_be_erased_again_but_a_revoked_one_can(service):
    s = insert(service, WAVE)
    revoke(service, s.source_id)
    erase(service, s.source_id, 2)
    with pytest.raises(AgentmemError) as e:
        erase(service, s.source_id, 3)
    assert reason(e.value) == "SOURCE_ERASED"


def test_explanation_reports_pending_rejected_and_revoked_matches(make_service):
    cases = make_service(memory__insert_policy="review_pending").cases
    agent = caller(AGENT)
    pending = insert(cases, "the lantern in the attic is zqpending", agent)
    rejected = insert(cases, "the lantern in the cellar is zqrejected", agent)
    review(cases, caller(USER), rejected.source_id, 1, Decision.REJECT)
    active = insert(cases, "the lantern in the garden", agent, MARKED)
    revoked = insert(cases, "the lantern in the shed", agent, MARKED)
    revoke(cases, revoked.source_id)
    erased = insert(cases, "the lantern in the boat", agent, MARKED)
    erase(cases, erased.source_id, 1)

    result = cases.retrieval.explain(A, "where is the lantern", "", 10)
    reasons = {e.source_id: (e.included, e.reason) for e in result.entries}
    assert reasons == {
        active.source_id: (True, "selected"),
        pending.source_id: (False, "pending_review"),
        rejected.source_id: (False, "rejected"),
        revoked.source_id: (False, "revoked"),
    }
    assert result.total_matches == 4


def test_a_prompt_record_never_cites_a_source_revoked_before_it_committed(make_service):
    """Prompt assembly selects, then records: a revocation committed in between makes it
    select again inside the recording transaction."""
    made = make_service()
    cases = made.cases
    kept = insert(cases, "the lantern on the porch")
    gone = insert(cases, "the lantern on the porch swing")
    admin = Caller("tenant-a", "alice", "user", frozenset({"memory.admin"}))

    class RevokingFirst(UnitOfWork):
        """The real unit of work; its first write transaction starts after a revocation
        committed (the interleaving a concurrent RevokeSource would produce)."""

        def __init__(self, real: UnitOfWork) -> None:
            self.__dict__.update(real.__dict__)
            self.revoked = False

        def write(self, tenant_id):  # type: ignore[no-untyped-def]
            if not self.revoked:
                self.revoked = True
                cases.lifecycle.revoke(admin, gone.source_id, "")
            return UnitOfWork.write(self, tenant_id)

    retrieval = Retrieval(
        RevokingFirst(made.uow), system_clock, default_mode=Mode.ENABLED, posting_budget=20_000
    )
    assembled = retrieval.assemble(admin, "lantern porch", "t1", 500)
    assert [c.source_id for c in assembled.block.cited] == [kept.source_id]
    assert "swing" not in assembled.block.context
    assert readback(cases, gone.source_id).clean


def test_the_indexed_document_counter_follows_revoke_and_erase(make_service):
    made = make_service()
    cases = made.cases
    ids = [insert(cases, f"lantern number {i}").source_id for i in range(4)]
    revoke(cases, ids[0])
    revoke(cases, ids[0])  # again
    erase(cases, ids[1], 1)
    classify(cases, ids[2], 1, COLD)
    counter = made.sql("SELECT indexed_docs FROM tenant_state WHERE tenant_id = 'tenant-a'")
    real = made.sql(
        "SELECT count(*) FROM sources WHERE tenant_id = 'tenant-a' AND indexed_revision > 0"
    )
    assert counter[0][0] == real[0][0] == 2


def test_readback_lists_every_kind_and_what_retrieval_would_return(service):
    s = insert(service, "I love my lantern", intent=MARKED)
    service.retrieval.assemble(A, "lantern", "t1", 500)
    r = readback(service, s.source_id)
    stored = {d.kind for d in r.derivatives if d.state == "stored"}
    assert stored == {"index_entry", "generated_form", "fact", "fact_index_row", "prompt_record"}
    assert all(d.eligible for d in r.derivatives if d.state == "stored")
    assert ("vector", "purged") in {(d.kind, d.state) for d in r.derivatives}  # embeddings off
    assert set(r.retrievable_by) == {"search", "prompt", "ask", "fact_search", "profile"}
    classify(service, s.source_id, 1, COLD)
    r = readback(service, s.source_id)
    assert not any(d.eligible for d in r.derivatives) and list(r.retrievable_by) == []
    assert not r.clean  # cold keeps its derived records
    revoke(service, s.source_id)
    r = readback(service, s.source_id)
    assert r.clean and {d.state for d in r.derivatives} == {"purged"}
    assert {d.kind for d in r.derivatives} >= {"fact_index_row", "prompt_record"}


def _files_hold(db_path: Path, needle: bytes) -> bool:
    return any(
        needle in p.read_bytes() for p in db_path.parent.glob(db_path.name + "*") if p.is_file()
    )


@pytest.mark.skipif(POSTGRES, reason="SQLite files; PostgreSQL erasure is tested below")
def test_erased_words_are_gone_from_the_database_files(make_service):
    made = make_service()
    cases = made.cases
    marker = "zqxerasedwordkvt"
    s = insert(cases, f"I like the {marker} lantern", intent=MARKED)
    assert cases.facts.search(A, FactQuery(query=marker))
    # Suffixes, not the whole word: FTS5 stores terms prefix-compressed.
    assert _files_hold(made.db_path, marker[3:].encode())
    erase(cases, s.source_id, 1)
    blobs = made.sql("SELECT block FROM fact_index_data")
    assert not any(marker[3:].encode() in bytes(b[0] or b"") for b in blobs)
    found = made.sql("SELECT count(*) FROM search_terms WHERE term LIKE :m", m=f"%{marker[3:]}%")
    assert found[0][0] == 0
    assert not _files_hold(made.db_path, marker[3:].encode())
    source, _ = cases.reads.get(A, s.source_id, False)
    assert source.erased_at_us  # its content's digest is no longer shown
    r = readback(cases, s.source_id)  # scrubbed before the erasure's call returned
    assert r.clean and r.physical.state is Physical.COMPLETE
    assert not r.physical.residue and r.physical.scrubbed_at_us


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL only")
def test_erasure_vacuums_the_touched_tables_on_postgresql(make_service):
    made = make_service()
    cases = made.cases
    s = insert(cases, "I like the zqxerasedwordkvt lantern")
    erase(cases, s.source_id, 1)
    # Readback says which residue is possible (never a plain `complete` on PostgreSQL), and
    # when the runtime's VACUUM of the touched tables finished.
    r = wait_until(lambda: (r := readback(cases, s.source_id)).physical.scrubbed_at_us and r, 30)
    assert r.clean and r.physical.state is Physical.RESIDUE_POSSIBLE
    assert list(r.physical.residue) == ["data_file_free_space", "wal", "wal_archive_and_replicas"]
    live = made.sql("SELECT count(*) FROM sources WHERE raw LIKE '%zqxerased%'")
    assert live[0][0] == 0
    assert made.sql("SELECT count(*) FROM facts WHERE statement LIKE '%zqxerased%'")[0][0] == 0


def test_a_reused_request_id_with_any_other_field_is_refused(service):
    again_as = caller(request_id="req-1")
    first = insert(service, WAVE, again_as, thread_id="t1")
    again = insert(service, WAVE, again_as, thread_id="t1")
    assert again.source_id == first.source_id and again.deduplicated
    for changed in (
        {"thread_id": "t2"},
        {"labels": {"topic": "other"}},
        {"intent": MARKED},
    ):
        with pytest.raises(AgentmemError) as e:
            insert(
                service,
                WAVE,
                again_as,
                thread_id=changed.get("thread_id", "t1"),  # type: ignore[arg-type]
                labels=changed.get("labels"),  # type: ignore[arg-type]
                intent=changed.get("intent", UNMARKED),  # type: ignore[arg-type]
            )
        assert reason(e.value) == "INVALID_FIELD"


def test_thread_ids_must_be_nfc_normalised(service):
    nfc = unicodedata.normalize("NFC", "café-thread")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    insert(service, WAVE, thread_id=nfc)
    with pytest.raises(AgentmemError) as e:
        insert(service, WAVE, thread_id=nfd)
    assert reason(e.value) == "INVALID_FIELD"
    assert "caf" not in f"{e.value.message} {e.value.metadata}"
