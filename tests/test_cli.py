"""Every CLI subcommand, through real servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentmem.cli.main import main
from tests.harness import ADMIN_A, ROOT
from tests.test_foreign import OWNER, POINTER


@pytest.fixture
def cli(stack, monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_ADDR", stack.address)
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)

    def run(*argv: str, expect: int = 0) -> str:
        with pytest.raises(SystemExit) as e:
            main(list(argv))
        out = capsys.readouterr()
        assert e.value.code == expect, out.out + out.err
        return out.out

    def js(*argv: str) -> dict:
        return json.loads(run(*argv, "--json"))

    run.json = js  # type: ignore[attr-defined]
    return run


def test_memory_commands(cli):
    s = cli.json("insert", "I have a red kayak", "--save-intent", "explicit_user_request")
    sid = s["source_id"]
    assert cli.json("sources", "list")["sources"][0]["source_id"] == sid
    assert cli.json("sources", "get", sid, "--content")["content"] == "I have a red kayak"
    assert cli.json("search", "kayak")["hits"][0]["source_id"] == sid
    assert "kayak" in cli.json("prompt", "kayak")["context"]
    assert cli.json("explain", "kayak")["entries"][0]["reason"] == "selected"
    assert cli.json("facts", "search", "kayak")["facts"][0]["object"] == "a red kayak"
    assert cli.json("profile")["entries"][0]["key"] == "user has"
    assert cli.json("ask", "Which kayak?")["answer_basis"] == "facts"
    assert cli.json("memories", "list")["memories"][0]["source_id"] == sid
    assert "1 source\n" in cli("sources", "list")  # human output
    assert cli.json("sources", "classify", sid, "cold", "--expected-revision", "1")["revision"] == 2
    cli.json("sources", "classify", sid, "active", "--expected-revision", "2")
    assert cli.json("sources", "readback", sid)["clean"] is False
    assert cli.json("sources", "revoke", sid)["effective_retrieval_state"] == ("revoked")
    assert cli.json("sources", "readback", sid)["clean"] is True
    other = cli.json("insert", "to be erased")["source_id"]
    assert cli.json("sources", "erase", other, "--expected-revision", "1")["source_id"] == other
    cli("sources", "get", "src_missing", expect=1)


def test_fact_time_commands(cli):
    cli.json("insert", "I live in Lisbon", "--observed-at", "2023-01-01")
    cli.json("insert", "I live in Berlin", "--observed-at", "2024-01-01T09:30:00Z")

    def lives(*argv: str) -> list[str]:
        return [f["object"] for f in cli.json("facts", "search", "live", *argv)["facts"]]

    assert lives() == ["Berlin"]
    assert lives("--as-of", "2023-06-01") == ["Lisbon"]
    assert sorted(lives("--history")) == ["Berlin", "Lisbon"]
    assert cli.json("profile", "--as-of", "2023-06-01")["entries"][0]["value"] == "Lisbon"
    assert "Lisbon" in cli.json("ask", "where do I live", "--as-of", "2023-06-01")["answer"]
    berlin = cli.json("facts", "search", "live")["facts"][0]["fact_id"]
    assert cli.json("facts", "retract", berlin, "--reason", "wrong")["fact_id"] == berlin
    assert lives() == ["Lisbon"]
    cli("facts", "retract", berlin, expect=1)  # FACT_RETRACTED
    with pytest.raises(SystemExit) as e:  # argparse refuses a time it cannot read
        main(["facts", "search", "--as-of", "last tuesday"])
    assert e.value.code == 2


def test_policy_and_review_commands(cli):
    assert cli.json("policy", "set", "review_pending", "--expected-revision", "0")["revision"] == 1
    assert cli.json("policy", "get")["insert_policy"] == "review_pending"
    sid = cli.json("insert", "pending thing")["source_id"]
    assert (
        cli.json("memories", "list", "--status", "pending_review")["memories"][0]["source_id"]
        == sid
    )
    assert cli.json("memories", "review", sid, "approve")["status"] == "active"


def test_foreign_commands(cli, tmp_path, monkeypatch, capsys):
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "k.pem"
    pem.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    # foreign sources are experimental: refused until the command line opts in
    cli("owner-key", "register", OWNER, "k1", str(pem), expect=1)
    cli.json("owner-key", "register", OWNER, "k1", str(pem), "--experimental", "foreign_sources")
    monkeypatch.setenv("AGENTMEM_EXPERIMENTAL", "foreign_sources")  # or by environment
    pointer = [
        "--uri",
        POINTER.uri,
        "--digest",
        POINTER.content_digest,
        "--media-type",
        POINTER.media_type,
        "--title",
        POINTER.title,
    ]
    prep = cli.json("foreign", "prepare", OWNER, *pointer)
    import jwt

    now = int(time.time())
    token = jwt.encode(
        {
            "iss": OWNER,
            "sub": prep["source_id"],
            "aud": prep["audience"],
            "digest": POINTER.content_digest,
            "iat": now,
            "exp": now + 600,
            "jti": "a1",
        },
        key,
        algorithm="EdDSA",
        headers={"kid": "k1"},
    )
    admitted = cli.json("foreign", "admit", OWNER, *pointer, "--assent", token)
    assert admitted["effective_retrieval_state"] == "eligible"
    assert (
        cli.json("foreign", "revoke-assent", prep["source_id"], "a1")["effective_retrieval_state"]
        == "revoked"
    )
    assert cli.json("owner-key", "revoke", OWNER, "k1")["key_id"] == "k1"


def test_existing_commands(cli):
    assert cli.json("capabilities")["api_version"] == "agentmem.v1"
    assert (
        cli.json("thread-mode", "set", "t1", "disabled", "--expected-revision", "0")["revision"]
        == 1
    )
    assert cli.json("thread-mode", "get", "t1")["mode"] == "disabled"
    assert json.loads(cli("watch", "--limit", "1", "--json"))["sequence"] == 1
    assert "audit chain ok" in cli("audit", "verify")
    assert "thread_memory_mode.set" in cli("audit", "list")


def test_doctor_speaks_plainly(cli, monkeypatch):
    out = cli("doctor")
    assert "the gateway at" in out and "credential is accepted" in out and "PROBLEM" not in out
    monkeypatch.setenv("AGENTMEM_TOKEN", "wrong")
    assert "does not know your credential" in cli("doctor", expect=1)
    monkeypatch.setenv("AGENTMEM_ADDR", "127.0.0.1:1")
    assert "no gateway answers" in cli("doctor", expect=1)


def test_export_respects_the_content_scope(cli, stack, monkeypatch):
    cli.json("insert", "exportable memory")
    lines = [json.loads(x) for x in cli("export").splitlines()]
    assert lines[0]["content"] == "exportable memory"
    from tests.harness import READER_A

    monkeypatch.setenv("AGENTMEM_TOKEN", READER_A.token)
    assert "content" not in json.loads(cli("export").splitlines()[0])


@pytest.mark.timeout(900)
def test_import_shows_progress_and_resumes_without_duplicates(stack, tmp_path):
    n = 3_000
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "\n".join(json.dumps({"content": f"imported memory number {i}"}) for i in range(n)) + "\n"
    )
    env = {**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": ADMIN_A.token}
    cmd = [sys.executable, "-m", "agentmem.cli.main", "import", str(path)]
    first = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen = ""
    while True:  # interrupt once the progress bar shows a good part done
        chunk = first.stderr.read(200)
        seen += chunk
        done = [int(x) for x in re.findall(r"(\d+)/3000", seen)]
        if (done and done[-1] >= 600) or not chunk:
            break
    first.kill()
    first.wait()
    assert done and done[-1] >= 600  # progress was shown
    second = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    found = re.search(r"imported (\d+), already present (\d+), refused 0", second.stdout)
    new, already = map(int, found.groups())
    assert new + already == n and already >= 600
    count = 0
    from agentmem.v1 import sources_pb2

    token = ""
    client = stack.client()
    while True:
        page = client.ListSources(sources_pb2.ListSourcesRequest(page_size=1000, page_token=token))
        count += len(page.sources)
        token = page.next_page_token
        if not token:
            break
    assert count == n  # nothing inserted twice


def test_hash_token_prints_what_the_config_wants(cli):
    import hashlib

    assert cli("hash-token", "s3cret").strip() == hashlib.sha256(b"s3cret").hexdigest()


def test_append_command(cli, stack):
    from tests.test_appends import start

    sid = start(stack.client()).source_id
    done = cli.json("sources", "append", sid, "the zqcli turn", "--expected-revision", "1")
    assert (done["revision"], done["message_count"]) == (2, 3)
    out = cli.json(
        "sources", "append", sid, "zqreply", "--role", "assistant", "--expected-revision", "2"
    )
    assert out["status"] == "active"
    assert cli.json("search", "zqcli")["hits"][0]["source_id"] == sid
    cli("sources", "append", sid, "late", "--expected-revision", "1", expect=1)  # CAS
    assert "(rev 4, status active, message count 5)" in cli(
        "sources", "append", sid, "again", "--expected-revision", "3"
    )


def test_search_reaches_several_passages_of_one_conversation(cli, stack):
    """`Client.search_memories(group_by_source=False)` and `agentmem search --passages`:
    several passages of one conversation; by default one hit per source."""
    client = stack.client()
    words = "the zqheron nests by the lake"
    session = client.insert_memory(
        messages=[
            {"role": "user", "content": f"In spring {words}."},
            {"role": "assistant", "content": "Noted, spring."},
            {"role": "user", "content": "Something else entirely about my bicycle tyres."},
            {"role": "assistant", "content": "Tyres noted."},
            {"role": "user", "content": "Something else again about the kitchen tap."},
            {"role": "assistant", "content": "Kitchen noted."},
            {"role": "user", "content": f"In autumn {words} again."},
        ]
    )
    grouped = client.search_memories(query="zqheron").hits
    apart = client.search_memories(query="zqheron", group_by_source=False).hits
    assert [h.source_id for h in grouped] == [session.source_id]
    assert len(apart) >= 2 and {h.source_id for h in apart} == {session.source_id}
    assert len(cli.json("search", "zqheron")["hits"]) == 1
    assert len(cli.json("search", "zqheron", "--passages")["hits"]) == len(apart)


def test_options_that_reach_every_request_field(cli, tmp_path):
    """What the CLI parity test found missing, through real servers: a conversation with
    labels, a dry run, the listing's filters, an explanation at a prompt's budget, the
    facts' filters and an audit list newest first from a page token."""
    said = tmp_path / "chat.json"
    said.write_text(
        json.dumps(
            [
                {"role": "user", "content": "My zqcello is from 1920", "name": "Ann"},
                {"role": "assistant", "content": "Noted", "sent_at": "2024-05-01T10:00:00Z"},
            ]
        )
    )
    intent = ("--save-intent", "explicit_user_request")
    dry = cli.json("insert", "--messages", str(said), "--validate-only", *intent)
    assert (dry["source_id"], dry["revision"]) == ("", 0)  # checked, not stored
    saved = cli.json(
        "insert", "--messages", str(said), "--label", "topic=music", "--thread", "zqthread", *intent
    )
    got = cli.json("sources", "get", saved["source_id"], "--content")
    assert got["source_kind"] == "conversation" and got["labels"] == {"topic": "music"}
    assert got["messages"][0]["name"] == "Ann" and got["messages"][1]["sent_at"]
    listed = cli.json("sources", "list", "--thread", "zqthread", "--kind", "conversation")
    assert [s["source_id"] for s in listed["sources"]] == [saved["source_id"]]
    assert cli.json("sources", "list", "--thread", "zqthread", "--kind", "memory")["sources"] == []
    explained = cli.json("explain", "zqcello", "--budget", "200")["entries"]
    assert explained[0]["source_id"] == saved["source_id"] and explained[0]["reason"] == "selected"
    assert "passage" in explained[0]
    both = cli("insert", "text", "--messages", str(said), expect=2)
    assert both == ""
    cli.json("facts", "search", "--status", "all", "--limit", "5", "--save-intent", intent[1])
    cli.json("profile", "--save-intent-source", "nobody")
    cli.json("insert", "a second memory", *intent)
    newest = cli.json("audit", "list", "--newest-first", "--page-size", "1")
    oldest = cli.json("audit", "list", "--page-size", "1")
    assert (oldest["target_id"], oldest["sequence"]) == (saved["source_id"], 1)
    assert newest["sequence"] == 2
