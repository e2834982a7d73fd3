"""`agentmem app-server` on stdio, driven as a subprocess against real servers: the
handshake, the gating, every method with its exact fields and enum values, compare-and-swap
failures, notifications of other clients' changes, bad input, and the schemas validating
real responses."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentmem.app_server.methods import METHODS
from agentmem_kernel import config
from tests.app_server_support import CLIENT_INFO, StdioHost, conforms
from tests.harness import ADMIN_A, ADMIN_B, READER_A, Stack, base_settings
from tests.test_facts import SQUIER

SECRET = "my-bank-pin-is-4417"  # memory text that must never come back in an error or a log


@pytest.fixture(scope="module")
def stack(loop_thread, tmp_path_factory):
    db = tmp_path_factory.mktemp("app-server") / "agentmem.db"
    shared = Stack(loop_thread, config.load(None, base_settings(db)), db).start()
    yield shared
    shared.stop()


@pytest.fixture
def bridge(stack, tmp_path):
    """A bridge acting as ADMIN_A; the test initializes it (or not)."""
    hosts: list[StdioHost] = []

    def start(token: str | None = ADMIN_A.token, *args: str) -> StdioHost:
        host = StdioHost(stack.address, token, tmp_path, *args)
        hosts.append(host)
        return host

    yield start
    for host in hosts:
        host.close()
        assert ADMIN_A.token not in host.stderr and SECRET not in host.stderr


@pytest.fixture(scope="module")
def host(stack, tmp_path_factory):
    """One initialized bridge (ADMIN_A, experimentalApi) shared by the module's tests: each
    test names its own threads and words, and waits for its own notifications."""
    shared = StdioHost(stack.address, ADMIN_A.token, tmp_path_factory.mktemp("bridge"))
    shared.initialize()
    yield shared
    assert shared.close() == 0
    assert ADMIN_A.token not in shared.stderr and SECRET not in shared.stderr


def test_the_handshake_comes_first_and_once(bridge):
    host = bridge()
    refused = host.error("thread/memoryMode/read", {"threadId": "hs-1"})
    assert refused == {"code": -32600, "message": "Not initialized"}
    bad = host.error("initialize", {"capabilities": {"experimentalApi": True}})
    assert bad["code"] == -32600 and bad["data"]["fieldViolations"] == [
        {"field": "clientInfo", "description": "is required"}
    ]
    opened = host.initialize(experimental=False)
    conforms(opened, "InitializeResponse")
    assert opened["userAgent"].startswith("agentmem-app-server/")
    assert "thread/memoryMode/set" in opened["methods"]
    assert "thread/memoryMode/updated" in opened["notifications"]
    again = host.error("initialize", {"clientInfo": CLIENT_INFO})
    assert again == {"code": -32600, "message": "Already initialized"}
    # the "jsonrpc" member is accepted and ignored; ids may be strings
    host.send(
        {
            "jsonrpc": "2.0",
            "id": "a-string",
            "method": "thread/memoryMode/read",
            "params": {"threadId": "hs-1"},
        }
    )
    assert host.answer("a-string")["result"]["threadId"] == "hs-1"


def test_a_credential_the_gateway_refuses_fails_initialize(bridge):
    host = bridge("not-a-token")
    error = host.error("initialize", {"clientInfo": CLIENT_INFO})
    assert error["code"] == -32600 and error["data"]["reason"] == "UNAUTHENTICATED"
    assert host.error("memory/sources/list")["message"] == "Not initialized"


def test_stdio_needs_a_credential(stack, tmp_path):
    host = StdioHost(stack.address, None, tmp_path)
    assert host.close() == 2
    assert "AGENTMEM_TOKEN" in host.stderr


def test_experimental_methods_and_notifications_need_the_opt_in(bridge, host, stack):
    plain, opted = bridge(), host  # the shared host opted in
    plain_methods = plain.initialize(experimental=False)["methods"]
    opted_methods = opted.opened["methods"]
    # foreign_sources is experimental on this gateway (its default settings): the bridge
    # learns it from GetCapabilities, and gates the methods of that capability
    foreign = {m.name for m in METHODS.values() if m.capability == "foreign_sources"}
    assert foreign and not foreign & set(plain_methods) and foreign <= set(opted_methods)
    assert set(plain_methods) | foreign == set(METHODS)
    pointer = {
        "uri": "https://wiki.example/1",
        "contentDigest": "ab" * 32,
        "mediaType": "text/html",
    }
    refused = plain.error("memory/foreign/prepare", {"canonicalOwner": "o", "pointer": pointer})
    assert refused["code"] == -32600
    assert refused["message"] == "memory/foreign/prepare requires experimentalApi capability"
    prepared = opted.result("memory/foreign/prepare", {"canonicalOwner": "o", "pointer": pointer})
    conforms(prepared, "MemoryForeignPrepareResponse")
    # an experimental event reaches only the opted-in connection
    key = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    other = stack.client()
    other.register_owner_key(owner_id="gate-owner", key_id="k1", public_key_pem=key.decode())
    other.set_thread_memory_mode(thread_id="gate-after", mode="disabled", expected_revision=0)
    registered = opted.notification("memory/ownerKeys/registered")
    assert registered["ownerId"] == "gate-owner" and registered["keyId"] == "k1"
    plain.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "gate-after")
    assert all(n["method"] != "memory/ownerKeys/registered" for n in plain.notifications)


def test_thread_memory_mode_read_set_and_a_stale_set(host):
    read = host.result("thread/memoryMode/read", {"threadId": "tm-1"})
    assert read == {"threadId": "tm-1", "mode": "enabled", "revision": 0, "effectiveAt": None}
    done = host.result(
        "thread/memoryMode/set", {"threadId": "tm-1", "expectedRevision": 0, "mode": "disabled"}
    )
    conforms(done, "ThreadMemoryModeSetResponse")
    assert {k: done[k] for k in ("threadId", "previousMode", "mode", "revision")} == {
        "threadId": "tm-1",
        "previousMode": "enabled",
        "mode": "disabled",
        "revision": 1,
    }
    assert done["effectiveAt"].endswith("Z") and done["receipt"]["targetId"] == "tm-1"
    updated = host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "tm-1")
    conforms(updated, "ThreadMemoryModeUpdatedNotification")
    assert updated["mode"] == "disabled" and updated["revision"] == 1
    stale = host.error(
        "thread/memoryMode/set", {"threadId": "tm-1", "expectedRevision": 0, "mode": "enabled"}
    )
    assert stale["code"] == -32600
    assert stale["data"]["reason"] == "REVISION_MISMATCH" and stale["data"]["currentRevision"] == 1
    conforms(stale, "JSONRPCErrorError")
    after = host.result("thread/memoryMode/read", {"threadId": "tm-1"})
    assert (after["mode"], after["revision"]) == ("disabled", 1)  # the stale set changed nothing
    missing = host.error("thread/memoryMode/set", {"threadId": "tm-1", "expectedRevision": 1})
    assert missing["code"] == -32600 and missing["data"]["fieldViolations"] == [
        {"field": "mode", "description": "is required"}
    ]


def test_a_set_without_expected_revision_is_unconditional_receipted_and_notified(host, stack):
    """Codex's shape `{threadId, mode}` (and members the bridge does not know, ignored)."""
    first = host.result(
        "thread/memoryMode/set", {"threadId": "un-1", "mode": "disabled", "codexOnly": True}
    )
    conforms(first, "ThreadMemoryModeSetResponse")
    assert (first["previousMode"], first["mode"], first["revision"]) == ("enabled", "disabled", 1)
    assert first["receipt"]["action"] == "thread_memory_mode.set"
    assert first["receipt"]["targetRevision"] == 1
    note = host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "un-1")
    assert (note["mode"], note["revision"]) == ("disabled", 1)
    # another client moves the thread on: the unconditional set still lands, on top
    stack.client(ADMIN_A).set_thread_memory_mode(
        thread_id="un-1", mode="enabled", expected_revision=1
    )
    again = host.result("thread/memoryMode/set", {"threadId": "un-1", "mode": "disabled"})
    assert (again["previousMode"], again["revision"]) == ("enabled", 3)
    receipts = stack.client().list_audit_receipts(target_id="un-1").receipts
    assert [(r.action, r.principal_id) for r in receipts] == [
        ("thread_memory_mode.set", "alice")
    ] * 3


def test_notifications_of_changes_made_by_another_client(host, stack):
    other = stack.client(ADMIN_A)
    other.set_thread_memory_mode(thread_id="nt-1", mode="disabled", expected_revision=0)
    mode = host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "nt-1")
    assert {k: mode[k] for k in ("previousMode", "mode", "revision")} == {
        "previousMode": "enabled",
        "mode": "disabled",
        "revision": 1,
    }
    saved = other.insert_memory(content="nt-quokka facts", save_intent="explicit_user_request")
    inserted = host.notification("memory/inserted", lambda p: p["sourceId"] == saved.source_id)
    conforms(inserted, "MemoryInsertedNotification")
    assert (inserted["sourceKind"], inserted["status"]) == ("memory", "active")
    other.set_source_classification(
        source_id=saved.source_id, classification="cold", expected_revision=1
    )
    cold = host.notification(
        "memory/sources/classification/updated", lambda p: p["sourceId"] == saved.source_id
    )
    conforms(cold, "MemorySourcesClassificationUpdatedNotification")
    assert (cold["previousClassification"], cold["classification"]) == ("active", "cold")
    assert cold["eventSequence"] > inserted["eventSequence"] > mode["eventSequence"]
    # another tenant's changes are not this connection's to see
    stack.client(ADMIN_B).set_thread_memory_mode(
        thread_id="nt-other", mode="disabled", expected_revision=0
    )
    other.set_thread_memory_mode(thread_id="nt-2", mode="disabled", expected_revision=0)
    host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "nt-2")
    assert all(n["params"].get("threadId") != "nt-other" for n in host.notifications)


def test_opted_out_notifications_are_not_sent(bridge, stack):
    host = bridge()
    opened = host.initialize(capabilities={"optOutNotificationMethods": ["memory/inserted", "x/y"]})
    assert "memory/inserted" not in opened["notifications"]
    other = stack.client()
    other.insert_memory(content="oo-wombat", save_intent="explicit_user_request")
    other.set_thread_memory_mode(thread_id="oo-1", mode="disabled", expected_revision=0)
    host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "oo-1")
    assert all(n["method"] != "memory/inserted" for n in host.notifications)


def test_sources_classification_and_explanation(host):
    intent = {"saveIntent": "explicit_user_request", "saveIntentSource": "tests"}
    first = host.result("memory/insert", {"content": "sx-narwhal one", "metadata": intent})
    second = host.result("memory/insert", {"content": "sx-narwhal two", "metadata": intent})
    conforms(first, "MemoryInsertResponse")
    assert (first["status"], first["revision"], first["deduplicated"]) == ("active", 1, False)
    query: dict = {"limit": 1, "filter": {"classification": "active"}}
    listed: set[str] = set()
    while True:
        page = host.result("memory/sources/list", query)
        conforms(page, "MemorySourcesListResponse")
        assert len(page["data"]) == 1 and set(page["data"][0]) >= {
            "sourceId",
            "revision",
            "sourceKind",
            "classification",
            "effectiveRetrievalState",
        }
        listed |= {s["sourceId"] for s in page["data"]}
        if page["nextCursor"] is None:
            break
        query = {**query, "cursor": page["nextCursor"]}
    assert {first["sourceId"], second["sourceId"]} <= listed
    changed = host.result(
        "memory/sources/classification/set",
        {"sourceId": second["sourceId"], "expectedRevision": 1, "classification": "cold"},
    )
    conforms(changed, "MemorySourcesClassificationSetResponse")
    assert (changed["previousClassification"], changed["classification"]) == ("active", "cold")
    assert changed["revision"] == 2
    stale = host.error(
        "memory/sources/classification/set",
        {"sourceId": second["sourceId"], "expectedRevision": 1, "classification": "active"},
    )
    assert stale["data"]["reason"] == "REVISION_MISMATCH" and stale["data"]["currentRevision"] == 2
    explained = host.result("memory/retrieval/explain", {"query": "sx-narwhal"})
    conforms(explained, "MemoryRetrievalExplainResponse")
    entries = {e["sourceId"]: e for e in explained["data"]}
    assert entries[first["sourceId"]]["included"] is True
    assert entries[first["sourceId"]]["selectionOrFilterReason"] == "selected"
    cold = entries[second["sourceId"]]
    assert (cold["included"], cold["selectionOrFilterReason"], cold["classification"]) == (
        False,
        "cold",
        "cold",
    )
    hits = host.result("memory/search", {"query": "sx-narwhal"})
    conforms(hits, "MemorySearchResponse")
    assert [h["sourceId"] for h in hits["data"]] == [first["sourceId"]]
    prompt = host.result("memory/prompt/assemble", {"query": "sx-narwhal", "threadId": "sx-t"})
    conforms(prompt, "MemoryPromptAssembleResponse")
    assert [c["sourceId"] for c in prompt["citations"]] == [first["sourceId"]]
    assert "sx-narwhal one" in prompt["context"] and "two" not in prompt["context"]


def test_a_session_grows_by_appends_with_its_notification(host):
    turns = [{"role": "user", "content": "sa-ocelot build setup"}]
    stored = host.result("memory/insert", {"messages": turns})
    params = {
        "sourceId": stored["sourceId"],
        "expectedRevision": 1,
        "messages": [{"role": "assistant", "content": "sa-ocelot wired into ci"}],
    }
    appended = host.result("memory/sources/append", params)
    conforms(appended, "MemorySourcesAppendResponse")
    assert (appended["revision"], appended["messageCount"], appended["status"]) == (
        2,
        2,
        "active",
    )
    stale = host.error("memory/sources/append", params)
    assert stale["data"]["reason"] == "REVISION_MISMATCH" and stale["data"]["currentRevision"] == 2
    event = host.notification(
        "memory/sources/appended", lambda p: p["sourceId"] == stored["sourceId"]
    )
    conforms(event, "MemorySourcesAppendedNotification")
    assert (event["revision"], event["appended"], event["messageCount"]) == (2, 1, 2)


def _owner_key() -> tuple[Ed25519PrivateKey, str]:
    key = Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return key, pem.decode()


def test_every_method_answers_with_its_schema(bridge):
    """The rest of the public API, as tenant B's admin: each result validates against its
    checked-in schema, with every field present and enums by their lower-case names."""
    host = bridge(ADMIN_B.token)
    host.initialize()

    def check(method: str, params: dict | None = None) -> dict:
        result = host.result(method, params)
        conforms(result, METHODS[method].result.__name__)
        return result

    caps = check("memory/capabilities/read")
    assert {c["name"] for c in caps["capabilities"]} >= {"thread_memory_mode", "foreign_sources"}
    assert caps["insertPolicy"] == "permissive" and caps["caller"]["principalId"] == "bob"
    policy = check("memory/insertPolicy/read")
    check(
        "memory/insertPolicy/set",
        {"expectedRevision": policy["revision"], "insertPolicy": "review_pending"},
    )
    held = check("memory/insert", {"content": SQUIER, "requestId": "ev-1"})
    assert held["status"] == "pending_review"
    assert check("memory/insert", {"content": SQUIER, "requestId": "ev-1"})["deduplicated"]
    check("memory/insert", {"content": "ev-validate", "validateOnly": True})
    pending = check("memory/review/list", {"statusFilter": "pending_review"})
    assert [m["sourceId"] for m in pending["data"]] == [held["sourceId"]]
    approved = check("memory/review/approve", {"sourceId": held["sourceId"], "expectedRevision": 1})
    assert approved["status"] == "active"
    rejected_one = check(
        "memory/insert",
        {
            "messages": [
                {"role": "user", "content": "ev-reject me", "sentAt": "2025-01-02T03:04:05Z"}
            ]
        },
    )
    rejected = check(
        "memory/review/reject", {"sourceId": rejected_one["sourceId"], "expectedRevision": 1}
    )
    assert rejected["status"] == "rejected"
    check(
        "memory/insertPolicy/set",
        {"expectedRevision": policy["revision"] + 1, "insertPolicy": "permissive"},
    )
    source = check("memory/sources/read", {"sourceId": held["sourceId"], "includeContent": True})
    assert source["content"] == SQUIER and source["status"] == "active"
    facts = check("memory/facts/search", {"query": "Squier"})
    assert facts["data"] and facts["data"][0]["sourceId"] == held["sourceId"]
    check("memory/profile/read")
    answer = check("memory/ask", {"question": "Which guitar does the user have? A Squier?"})
    assert answer["provenance"][0]["sourceId"] == held["sourceId"]
    fact_id = facts["data"][0]["factId"]
    assert (
        check("memory/facts/retract", {"factId": fact_id, "reason": "wrong"})["factId"] == fact_id
    )
    assert fact_id not in {f["factId"] for f in check("memory/facts/search")["data"]}
    # foreign admission with the owner's assent, then its revocation and erasure
    key, pem = _owner_key()
    check("memory/ownerKeys/register", {"ownerId": "ev-owner", "keyId": "k1", "publicKeyPem": pem})
    pointer = {
        "uri": "https://wiki.example/ev",
        "contentDigest": "cd" * 32,
        "mediaType": "text/html",
    }
    prepared = check("memory/foreign/prepare", {"canonicalOwner": "ev-owner", "pointer": pointer})
    now = int(time.time())
    claims = {
        "iss": "ev-owner",
        "sub": prepared["sourceId"],
        "aud": prepared["audience"],
        "digest": "cd" * 32,
        "iat": now,
        "exp": now + 600,
        "jti": "ev-assent",
    }
    assent = jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": "k1"})
    admitted = check(
        "memory/foreign/admit", {"canonicalOwner": "ev-owner", "pointer": pointer, "assent": assent}
    )
    assert admitted["effectiveRetrievalState"] == "eligible"
    revoked_assent = check(
        "memory/sources/assent/revoke", {"sourceId": admitted["sourceId"], "assentId": "ev-assent"}
    )
    assert revoked_assent["effectiveRetrievalState"] in ("revoked", "assent_invalid")
    check("memory/ownerKeys/revoke", {"ownerId": "ev-owner", "keyId": "k1"})
    revoked = check("memory/sources/revoke", {"sourceId": held["sourceId"], "reason": "wrong"})
    assert revoked["effectiveRetrievalState"] == "revoked"
    readback = check("memory/sources/readback", {"sourceId": held["sourceId"]})
    assert readback["clean"] is True and {d["kind"] for d in readback["derivatives"]}
    current = check("memory/sources/read", {"sourceId": rejected_one["sourceId"]})
    check(
        "memory/sources/erase",
        {"sourceId": rejected_one["sourceId"], "expectedRevision": current["revision"]},
    )
    receipts = check("memory/audit/list", {"limit": 2})
    assert len(receipts["data"]) == 2 and receipts["nextCursor"]
    verified = check("memory/audit/verify")
    assert verified["ok"] is True and verified["length"] >= 10
    # the tour above and the other tests cover the whole table
    assert host.called | {
        "thread/memory/read",
        "memory/status",
        "memory/reset",
        "thread/memoryMode/read",
        "thread/memoryMode/set",
        "memory/search",
        "memory/prompt/assemble",
        "memory/retrieval/explain",
        "memory/sources/list",
        "memory/sources/classification/set",
        "memory/sources/append",
    } >= set(METHODS)


def test_a_missing_scope_is_the_gateways_error_and_says_who_decides(bridge):
    host = bridge(READER_A.token)
    host.initialize()
    error = host.error(
        "thread/memoryMode/set", {"threadId": "sc-1", "expectedRevision": 0, "mode": "disabled"}
    )
    assert error["code"] == -32600
    # A thread's mode is the person's decision: the refusal says so, and where it is made.
    assert error["data"] == {
        "reason": "MISSING_SCOPE",
        "scope": "memory.policy",
        "decidedBy": "person",
    }
    assert error["message"].startswith("the credential lacks a required scope. ")
    assert "the person's decision" in error["message"]
    assert "`agentmem thread-mode set THREAD_ID MODE" in error["message"]
    searched = host.error("memory/search", {"query": "guitar", "limit": 0})
    assert "decidedBy" not in searched["data"]  # other refusals are as the gateway says


def test_lines_without_a_usable_id_are_not_answered_and_the_connection_kept(bridge):
    """As Codex's server: nothing goes out that Codex's `JSONRPCMessage` does not admit (an
    error needs an id; null is not one), one log line says why, never what was sent."""
    host = bridge()
    host.initialize()
    for line in (
        "{not json",
        "[1, 2]",
        '{"id": true, "method": "memory/search"}',
        '{"id": 9223372036854775808, "method": "memory/search"}',
        '{"id": "\\ud800", "method": "memory/search"}',
        '{"params": {}}',
    ):
        host.write(line)
    # the next request is the next answer: nothing was sent for the lines above
    host.send({"id": "after", "method": "thread/memoryMode/read", "params": {"threadId": "ml-1"}})
    assert host.next_message()["id"] == "after"
    host.write('{"id": "no-method"}')
    assert host.next_message()["id"] == "no-method"
    assert host.close() == 0
    dropped = [line for line in host.stderr.splitlines() if "message dropped" in line]
    assert len(dropped) == 6 and "memory/search" not in host.stderr


def test_refused_params_and_methods_use_codexs_codes_with_a_reason(host):
    unknown = host.error("memory/no/such/thing")
    assert unknown == {
        "code": -32600,
        "message": "Invalid request: unknown method",
        "data": {"reason": "METHOD_NOT_FOUND"},
    }
    assert host.error("memory/search", [SECRET])["code"] == -32600
    bad = host.error(
        "memory/insert",
        {"content": SECRET, "threadId": 5, "sourceKind": SECRET, SECRET: 1, "labels": {}},
    )
    assert bad["code"] == -32600 and SECRET not in json.dumps(bad)
    assert bad["data"]["reason"] == "INVALID_FIELD"
    # members the bridge does not know are ignored, as Codex does
    assert {v["field"] for v in bad["data"]["fieldViolations"]} == {"threadId", "sourceKind"}
    out_of_range = host.error("memory/status", {"minConsolidatedThreads": 0})
    assert out_of_range["code"] == -32602 and out_of_range["data"]["reason"] == "INVALID_FIELD"
    refused = host.error("memory/insert", {"content": SECRET, "metadata": {"saveIntent": SECRET}})
    assert refused["data"]["reason"] == "SAVE_INTENT_INVALID" and SECRET not in json.dumps(refused)
    assert host.result("thread/memoryMode/read", {"threadId": "ml-1"})["revision"] == 0


def test_a_ten_megabyte_line_is_dropped_and_the_connection_kept(bridge):
    host = bridge()
    host.initialize()
    line = json.dumps({"id": 1, "method": "memory/insert", "params": {"content": SECRET * 600_000}})
    assert len(line) > 10_000_000
    host.write(line)
    assert host.result("thread/memoryMode/read", {"threadId": "big-1"})["revision"] == 0
    assert host.close() == 0
    assert "over the size limit" in host.stderr and SECRET not in host.stderr


def test_too_many_requests_in_flight_are_refused_with_overloaded(bridge):
    host = bridge(ADMIN_A.token, "--max-in-flight", "1")
    host.initialize()
    batch = "\n".join(
        json.dumps({"id": i, "method": "memory/sources/list", "params": {}}) for i in range(20)
    )
    host.write(batch)
    answers = [host.answer(i) for i in range(20)]
    overloaded = [a["error"] for a in answers if "error" in a]
    assert overloaded and all(
        e
        == {
            "code": -32001,
            "message": "Server overloaded; retry later.",
            "data": {"reason": "OVERLOADED", "limit": 1},
        }
        for e in overloaded
    )
    assert any("result" in a for a in answers)


def test_a_reconnecting_host_resumes_after_its_last_event(bridge, stack):
    first = bridge()
    first.initialize()
    other = stack.client()
    other.set_thread_memory_mode(thread_id="rs-1", mode="disabled", expected_revision=0)
    seen = first.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "rs-1")
    first.close()
    # while no bridge runs, two changes
    other.set_thread_memory_mode(thread_id="rs-2", mode="disabled", expected_revision=0)
    other.set_thread_memory_mode(thread_id="rs-3", mode="disabled", expected_revision=0)
    second = bridge()
    second.initialize(eventsAfterSequence=seen["eventSequence"])
    resumed = [
        second.notification("thread/memoryMode/updated")["threadId"],
        second.notification("thread/memoryMode/updated")["threadId"],
    ]
    assert resumed == ["rs-2", "rs-3"]


def test_notifications_resume_across_a_gateway_restart(make_stack, tmp_path):
    from protocol_svc import app as gateway_app

    stack = make_stack()
    host = StdioHost(stack.address, ADMIN_A.token, tmp_path)
    host.initialize()
    writer = stack.client()
    writer.set_thread_memory_mode(thread_id="gw-0", mode="disabled", expected_revision=0)
    host.notification("thread/memoryMode/updated", lambda p: p["threadId"] == "gw-0")
    port = stack.gateway.port
    stack.loop.run(stack.gateway.stop())  # the bridge's event stream breaks
    stack.gateway = stack.loop.run(
        gateway_app.start(
            stack.settings, listen=f"127.0.0.1:{port}", runtime_address=stack.runtime_address
        )
    )
    for i in range(1, 4):
        writer.set_thread_memory_mode(thread_id=f"gw-{i}", mode="disabled", expected_revision=0)
    got = [host.notification("thread/memoryMode/updated") for _ in range(3)]
    assert [p["threadId"] for p in got] == ["gw-1", "gw-2", "gw-3"]
    sequences = [p["eventSequence"] for p in got]
    assert sequences == list(range(sequences[0], sequences[0] + 3))  # no gap, no duplicate
    assert host.result("thread/memoryMode/read", {"threadId": "gw-3"})["revision"] == 1
    assert host.close() == 0


def test_a_resume_point_the_log_no_longer_holds_stops_notifications_with_a_reason(
    make_stack, tmp_path
):
    stack = make_stack(events__max_events_per_tenant=3)
    writer = stack.client()
    for i in range(6):  # events 1..3 are compacted away
        writer.set_thread_memory_mode(thread_id=f"cp-{i}", mode="disabled", expected_revision=0)
    host = StdioHost(stack.address, ADMIN_A.token, tmp_path)
    host.initialize(eventsAfterSequence=1)
    stopped = host.notification("memory/events/stopped")
    conforms(stopped, "EventsStoppedNotification")
    assert (stopped["reason"], stopped["lastEventSequence"]) == ("EVENTS_COMPACTED", 1)
    assert host.result("thread/memoryMode/read", {"threadId": "cp-5"})["revision"] == 1
    assert host.close() == 0
