"""A database written by the previous release moves forward: nothing lost, nothing ineligible
became eligible, and residue of revoked or erased sources is purged."""

from __future__ import annotations

import hashlib
import json
import os
import time

from alembic import command
from sqlalchemy import create_engine, text

from agentmem.v1 import foreign_pb2, retrieval_pb2, sources_pb2
from runtime_svc.storage.db import sqlite_engine
from runtime_svc.storage.migrate import alembic_config
from tests.harness import database_url, wait_until
from tests.memory_helpers import explain, get_source, list_sources, search_ids
from tests.test_facts import facts

TENANT = "tenant-a"
NOW = int(time.time() * 1_000_000)
HOUR = 3_600_000_000
POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))


def _shard(tenant_id: str) -> int:
    return int(hashlib.sha256(tenant_id.encode()).hexdigest()[:8], 16) % 16


def _source(pk: int, name: str, text_: str, **state: object) -> dict[str, object]:
    row = {
        "pk": pk,
        "tenant_id": TENANT,
        "source_id": f"src_old{name}",
        "revision": 1,
        "kind": "memory",
        "classification": "active",
        "status": "active",
        "thread_id": "",
        "raw": text_,
        "content_sha256": hashlib.sha256(text_.encode()).hexdigest(),
        "generated_form": text_,
        "generated_revision": 1,
        "indexed_revision": 1,
        "principal_id": "alice",
        "principal_kind": "user",
        "surface": "grpc",
        "request_id": "",
        "save_intent": "",
        "save_intent_source": "",
        "save_intent_evidence": "",
        "labels": "{}",
        "created_at_us": NOW - HOUR,
        "updated_at_us": NOW - HOUR,
        "revoked_at_us": 0,
        "assent_state": "",
        "assent_expires_at_us": 0,
        "reviewed_by": "",
        "reviewed_at_us": 0,
        "review_note": "",
        "canonical_owner": "",
        "assent_id": "",
        "assent_key_id": "",
        "erased_at_us": 0,
    }
    row.update(state)
    return row


# What the previous release could leave behind, one source per state. `residue` marks
# derived records that it kept although the source was revoked (an approval after a
# revocation re-derived them) or erased.
OLD = [
    _source(1, "active", "I like the zqactive lantern"),
    _source(2, "cold", "I like the zqcold lantern", classification="cold", revision=2),
    _source(
        3, "pending", "I like the zqpending lantern", status="pending_review", indexed_revision=0
    ),
    _source(4, "rejected", "I like the zqrejected lantern", status="rejected", indexed_revision=0),
    _source(5, "revoked", "I like the zqrevoked lantern", revoked_at_us=NOW - 10, revision=3),
    _source(
        6,
        "erased",
        "I like the zqerased lantern",
        revoked_at_us=NOW - 10,
        erased_at_us=NOW - 10,
        raw="",
        generated_form="",
        revision=2,
    ),
    _source(
        7,
        "foreignok",
        json.dumps({"title": "zqforeignok lantern roster", "descriptor": ""}),
        kind="foreign",
        generated_form="zqforeignok lantern roster",
        assent_state="valid",
        assent_expires_at_us=NOW + 24 * HOUR,
        assent_id="a1",
    ),
    _source(
        8,
        "foreignexp",
        json.dumps({"title": "zqforeignexp lantern roster", "descriptor": ""}),
        kind="foreign",
        generated_form="zqforeignexp lantern roster",
        assent_state="valid",
        assent_expires_at_us=NOW - HOUR,
        assent_id="a2",
    ),
]
INDEXED = {1, 2, 5, 7, 8}  # 5: residue of an approval after revocation
FACTS = {1: "zqactive", 5: "zqrevoked", 6: "zqerased"}  # 5 and 6: residue


def build_old_database(url: str) -> None:
    """Schema of the previous release (migrations through 0005), rows as it wrote them."""
    engine = sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        sqlite = conn.dialect.name == "sqlite"
        columns = list(OLD[0])
        conn.execute(
            text(
                f"INSERT INTO sources ({', '.join(columns)}) "
                f"VALUES ({', '.join(':' + c for c in columns)})"
            ),
            OLD,
        )
        if sqlite:
            for row in OLD:
                if row["pk"] in INDEXED:
                    conn.execute(
                        text(
                            f"INSERT INTO memory_index_{_shard(TENANT):02d}(rowid, body, scope) "
                            "VALUES (:pk, :body, 'x')"
                        ),
                        {"pk": row["pk"], "body": row["generated_form"]},
                    )
        for fact_pk, (pk, word) in enumerate(FACTS.items(), start=1):
            statement = f"user likes {word} lantern"
            conn.execute(
                text(
                    "INSERT INTO facts (pk, tenant_id, fact_id, source_id, source_revision, "
                    "subject, predicate, object, statement, confidence, confidence_reason, "
                    "save_intent, save_intent_source, created_at_us) VALUES (:fpk, :t, :fid, "
                    ":sid, 1, 'user', 'likes', :obj, :st, 0.5, 'none', '', '', :now)"
                ),
                {
                    "fpk": fact_pk,
                    "t": TENANT,
                    "fid": f"fact_old{fact_pk}",
                    "sid": f"src_old{OLD[pk - 1]['source_id'][7:]}",
                    "obj": f"{word} lantern",
                    "st": statement,
                    "now": NOW - HOUR,
                },
            )
            if sqlite:
                conn.execute(
                    text("INSERT INTO fact_index(rowid, statement) VALUES (:r, :s)"),
                    {"r": fact_pk, "s": statement},
                )
        for record, cited in (("prm_old1", "src_oldactive"), ("prm_old2", "src_oldrevoked")):
            conn.execute(
                text("INSERT INTO prompt_records VALUES (:t, :r, 't1', :now, 500, 10, :h)"),
                {"t": TENANT, "r": record, "now": NOW - HOUR, "h": "0" * 64},
            )
            conn.execute(
                text("INSERT INTO derived_provenance VALUES (:t, 'prompt_record', :r, :s, 1)"),
                {"t": TENANT, "r": record, "s": cited},
            )
        conn.execute(
            text(
                "INSERT INTO tenant_state (tenant_id, event_sequence, receipt_sequence, "
                "receipt_head_hash, events_compacted_through, indexed_docs) "
                "VALUES (:t, 0, 0, '', 0, 9)"
            ),
            {"t": TENANT},
        )
    engine.dispose()


def test_a_database_of_the_previous_release_upgrades_cleanly(make_stack, tmp_path):
    url = database_url(tmp_path / "old.db")
    build_old_database(url)
    stack = make_stack(storage__url=url)
    client = stack.client()

    every = {s.source_id for s in list_sources(client, status=0).sources}
    every |= {
        s.source_id for s in list_sources(client, status=sources_pb2.STATUS_PENDING_REVIEW).sources
    }
    every |= {s.source_id for s in list_sources(client, status=sources_pb2.STATUS_REJECTED).sources}
    assert {f"src_old{n}" for n in ("active", "pending", "rejected")} <= every  # nothing lost
    for row in OLD:
        assert get_source(client, row["source_id"]).revision == row["revision"]
    assert get_source(client, "src_oldcold", include_content=True).content == OLD[1]["raw"]

    assert sorted(search_ids(client, "lantern roster", limit=20)) == [
        "src_oldactive",
        "src_oldforeignok",
    ]
    reasons = {e.source_id: e.reason for e in explain(client, "lantern", limit=20).entries}
    assert reasons == {
        "src_oldactive": retrieval_pb2.REASON_SELECTED,
        "src_oldforeignok": retrieval_pb2.REASON_SELECTED,
        "src_oldcold": retrieval_pb2.REASON_COLD,
        "src_oldpending": retrieval_pb2.REASON_PENDING_REVIEW,
        "src_oldrejected": retrieval_pb2.REASON_REJECTED,
        "src_oldrevoked": retrieval_pb2.REASON_REVOKED,
        "src_oldforeignexp": retrieval_pb2.REASON_ASSENT_EXPIRED,
    }
    assert {f.source_id for f in facts(client, "lantern", status=3)} == {"src_oldactive"}
    assert not any(f.HasField("passage") for f in facts(client, "lantern", status=3))

    def clean(sid: str) -> bool:
        return client.ReadbackSource(foreign_pb2.ReadbackSourceRequest(source_id=sid)).clean

    # The erased source's physical scrub is finished in the background at start-up (a reader
    # may hold it back for a moment); readback says pending until then, never clean before.
    assert clean("src_oldrevoked")
    wait_until(lambda: clean("src_olderased"), 60, "the erased source read back clean")
    assert get_source(client, "src_olderased").content_sha256 == ""
    counter = stack.sql("SELECT indexed_docs FROM tenant_state WHERE tenant_id = :t", t=TENANT)
    assert counter[0][0] == 4  # active, cold, two foreign (the revoked one's entry is gone)
    if not POSTGRES:
        rows = stack.sql("SELECT count(*) FROM fact_index WHERE fact_index MATCH 'zqrevoked'")
        assert rows[0][0] == 0
