"""Export → import keeps what a memory is: its thread, labels, save intent with evidence,
classification, a conversation's speakers and times; exporting again gives the same lines
apart from ids and server times. Erased and revoked memories are left out, counted apart."""

from __future__ import annotations

import json

import pytest

from agentmem.cli import jsonl
from agentmem.cli.main import main
from tests.harness import ADMIN_A, READER_A

SERVER_FIELDS = ("source_id", "received_at", "reviewed_at")


@pytest.fixture
def cli(monkeypatch, capsys):
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)

    def run(address: str, *argv: str) -> tuple[str, str]:
        with pytest.raises(SystemExit) as e:
            main([*argv, "--addr", address])
        out = capsys.readouterr()
        assert e.value.code == 0, out.err
        return out.out, out.err

    return run


def comparable(lines: str) -> list[dict]:
    """The exported lines without ids and server times, in a stable order."""
    records = [json.loads(x) for x in lines.splitlines()]
    for r in records:
        for name in SERVER_FIELDS:
            r.pop(name, None)
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True))


def test_export_import_export_gives_the_same_lines(make_stack, tmp_path, cli):
    source, target = make_stack(), make_stack()
    a = source.client()
    a.insert_memory(
        content="I have a red kayak",
        thread_id="chat-7",
        labels={"topic": "boats", "mood": "happy"},
        save_intent="explicit_user_request",
        save_intent_source="opencode",
        save_intent_evidence="User said: remember my kayak",
    )
    talk = a.insert_memory(
        messages=[
            {
                "role": "user",
                "content": "I moved to Lisbon",
                "name": "Caroline",
                "sent_at": "2023-05-08T13:56:00Z",
            },
            {"role": "assistant", "content": "Congratulations!", "sent_at": "2023-05-08T13:57:00Z"},
        ],
        thread_id="chat-8",
        save_intent="user_confirmed",
    )
    a.set_source_classification(
        source_id=talk.source_id, classification="cold", expected_revision=1
    )
    gone = a.insert_memory(content="a revoked thing")
    a.revoke_source(source_id=gone.source_id)
    erased = a.insert_memory(content="an erased thing")
    a.erase_source(source_id=erased.source_id, expected_revision=1)

    first, err = cli(source.address, "export")
    assert "left out 1 revoked and 1 erased memories" in err
    exported = comparable(first)
    assert sorted(r.get("thread_id") for r in exported) == ["chat-7", "chat-8"]
    kayak = next(r for r in exported if r.get("content") == "I have a red kayak")
    assert kayak["labels"] == {"mood": "happy", "topic": "boats"}
    assert kayak["save_intent_evidence"] == "User said: remember my kayak"
    talk_line = next(r for r in exported if "messages" in r)
    assert talk_line["messages"][0] == {
        "role": "user",
        "content": "I moved to Lisbon",
        "name": "Caroline",
        "sent_at": "2023-05-08T13:56:00Z",
    }

    path = tmp_path / "export.jsonl"
    path.write_text(first)
    out, _ = cli(target.address, "import", str(path))
    assert "imported 2, already present 0, refused 0" in out
    second, _ = cli(target.address, "export")
    assert comparable(second) == exported


def test_import_keeps_the_observed_time_of_each_line():
    """The time a memory was said (or, from an export, first received) is kept with the line,
    and sent with the insert where the server's API has `observed_at`."""
    line = jsonl.parse_line(
        1,
        json.dumps({"content": "x", "received_at": "2024-01-02T03:04:05Z"}),
    )
    assert line.observed_at == "2024-01-02T03:04:05Z"
    assert ("observed_at" in line.insert) == jsonl.OBSERVED_AT
    line = jsonl.parse_line(
        2,
        json.dumps(
            {
                "content": "x",
                "observed_at": "2020-01-01T00:00:00Z",
                "received_at": "2024-01-02T03:04:05Z",
            }
        ),
    )
    assert line.observed_at == "2020-01-01T00:00:00Z"
    with pytest.raises(jsonl.BadLine, match="observed_at must be an RFC 3339 time"):
        jsonl.parse_line(3, json.dumps({"content": "x", "observed_at": "yesterday"}))
    with pytest.raises(jsonl.BadLine, match=r"messages\[0\].sent_at"):
        jsonl.parse_line(
            4, json.dumps({"messages": [{"role": "user", "content": "x", "sent_at": "soon"}]})
        )


def test_importing_again_does_not_report_a_since_ended_memory_as_there(
    make_stack, tmp_path, cli, capsys
):
    stack = make_stack()
    c = stack.client()
    path = tmp_path / "memories.jsonl"
    lines = [
        {"content": "I keep the spare key under the blue flowerpot", "request_id": "key"},
        {"content": "My locker code is in the red notebook", "request_id": "locker"},
        {"content": "I moved to Lisbon", "request_id": "move", "classification": "cold"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out, _ = cli(stack.address, "import", str(path))
    assert "imported 3, already present 0, refused 0" in out
    ids = {m.content: m.source_id for m in c.list_memories(status_filter="all").memories}
    c.revoke_source(source_id=ids["I keep the spare key under the blue flowerpot"])
    locker = ids["My locker code is in the red notebook"]
    c.erase_source(source_id=locker, expected_revision=1)

    with pytest.raises(SystemExit) as e:  # the run fixture expects success: call it directly
        main(["import", str(path), "--addr", stack.address])
    out, err = capsys.readouterr()
    assert e.value.code == 1, err
    assert len(c.list_memories(status_filter="all").memories) == 3  # nothing inserted again
    # the cold line was made cold by the import itself: already present, as the line says;
    # the ended ones are refused (never brought back) without stopping the import
    assert "imported 0, already present 1, refused 2" in out
    assert "not restored: imported before and no longer active (1 erased, 1 revoked)" in err
    assert "flowerpot" not in out + err


def test_a_round_trip_keeps_what_is_current(make_stack, tmp_path, cli):
    """What a memory was observed at decides which fact is current: "I live in Berlin" said in
    June beats "I live in Vancouver" said in January, even when Vancouver was inserted later.
    After export and import into a fresh server, Berlin is still current."""
    source, target = make_stack(), make_stack()
    a = source.client()
    a.insert_memory(content="I live in Berlin", observed_at="2025-06-10T09:00:00Z")
    a.insert_memory(content="I live in Vancouver", observed_at="2025-01-10T09:00:00Z")

    def current(client) -> list[str]:  # type: ignore[no-untyped-def]
        return [f.object for f in client.search_facts(query="live").facts]

    assert current(a) == ["Berlin"]
    exported, err = cli(source.address, "export")
    assert all("observed_at" in json.loads(x) for x in exported.splitlines())
    assert "not carried" in err  # says what a round trip cannot keep
    path = tmp_path / "export.jsonl"
    path.write_text(exported)
    cli(target.address, "import", str(path))
    assert current(target.client()) == ["Berlin"]
    again, _ = cli(target.address, "export")
    assert comparable(again) == comparable(exported)


def test_an_appended_conversation_is_exported_with_every_message(make_stack, cli):
    stack = make_stack()
    a = stack.client()
    talk = a.insert_memory(messages=[{"role": "user", "content": "I moved to Lisbon"}])
    a.append_messages(
        source_id=talk.source_id,
        expected_revision=1,
        messages=[{"role": "assistant", "content": "Congratulations!"}],
    )
    a.append_messages(
        source_id=talk.source_id,
        expected_revision=2,
        messages=[{"role": "user", "content": "My cat came too"}],
    )
    out, _ = cli(stack.address, "export")
    (line,) = [json.loads(x) for x in out.splitlines()]
    assert [(m["role"], m["content"]) for m in line["messages"]] == [
        ("user", "I moved to Lisbon"),
        ("assistant", "Congratulations!"),
        ("user", "My cat came too"),
    ]


@pytest.fixture
def cli_any(monkeypatch, capsys):
    """The CLI as a person runs it, whatever its exit code: (code, stdout, stderr)."""
    monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)

    def run(address: str, *argv: str) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as e:
            main([*argv, "--addr", address])
        out = capsys.readouterr()
        return int(e.value.code or 0), out.out, out.err

    return run


def stored(client) -> list[str]:  # type: ignore[no-untyped-def]
    """What the tenant holds, one entry per memory: its text, or its messages' texts."""
    return sorted(
        m.content or " | ".join(x.content for x in m.messages)
        for m in client.list_memories(status_filter="all").memories
    )


def test_importing_an_export_into_the_same_server_adds_nothing(make_stack, tmp_path, cli_any):
    """Moving memories back where they came from: every line is recognised as already
    present (by its source id), whoever inserted it and under whatever request id; nothing
    is stored twice, and the counts say so."""
    stack = make_stack()
    a = stack.client()
    a.insert_memory(content="I have a red kayak", request_id="agent-turn-4")
    a.insert_memory(content="I like tea", thread_id="chat-1", labels={"topic": "drinks"})
    cold = a.insert_memory(content="I lived in Porto")
    a.set_source_classification(
        source_id=cold.source_id, classification="cold", expected_revision=1
    )
    a.insert_memory(messages=[{"role": "user", "content": "I moved to Lisbon"}])
    before = stored(a)
    code, exported, _ = cli_any(stack.address, "export")
    assert code == 0
    path = tmp_path / "export.jsonl"
    path.write_text(exported)

    code, out, err = cli_any(stack.address, "import", str(path), "--json")
    assert code == 0, err
    counts = json.loads(out)
    assert (counts["imported"], counts["already_present"], counts["refused"]) == (0, 4, 0)
    assert stored(a) == before
    code, out, _ = cli_any(stack.address, "import", str(path))
    assert code == 0
    assert "imported 0, already present 4, refused 0" in out
    assert stored(a) == before


def test_a_conversation_that_grew_after_export_is_recognised_or_given_its_new_turns(
    make_stack, tmp_path, cli_any
):
    """A conversation appended to after the export is already present where it grew; where
    the export is the longer one, the target's copy gets the turns it lacks, once."""
    source, target = make_stack(), make_stack()
    a, b = source.client(), target.client()
    talk = a.insert_memory(
        messages=[{"role": "user", "content": "I moved to Lisbon"}], thread_id="chat-8"
    )
    path = tmp_path / "first.jsonl"
    path.write_text(cli_any(source.address, "export")[1])
    a.append_messages(
        source_id=talk.source_id,
        expected_revision=1,
        messages=[{"role": "assistant", "content": "Congratulations!"}],
    )
    # back into the server it came from, where the conversation has grown since
    code, out, err = cli_any(source.address, "import", str(path))
    assert (code, "imported 0, already present 1, refused 0" in out) == (0, True), out + err
    assert stored(a) == ["I moved to Lisbon | Congratulations!"]

    # to another server, then the longer export: the copy there gets the new turn
    assert cli_any(target.address, "import", str(path))[0] == 0
    longer = tmp_path / "second.jsonl"
    longer.write_text(cli_any(source.address, "export")[1])
    code, out, err = cli_any(target.address, "import", str(longer), "--json")
    assert code == 0, err
    counts = json.loads(out)
    assert (counts["extended"], counts["already_present"], counts["refused"]) == (1, 0, 0)
    assert stored(b) == ["I moved to Lisbon | Congratulations!"]
    # again, and the shorter one again: nothing more
    for again in (longer, path):
        code, out, err = cli_any(target.address, "import", str(again))
        assert (code, "imported 0, already present 1, refused 0" in out) == (0, True), out + err
    assert stored(b) == ["I moved to Lisbon | Congratulations!"]


def test_import_stops_at_a_refused_line_with_its_counts_or_goes_on_when_asked(
    make_stack, tmp_path, cli_any
):
    stack = make_stack()
    a = stack.client()
    a.set_thread_memory_mode(thread_id="quiet", mode="disabled", expected_revision=0)
    path = tmp_path / "memories.jsonl"
    lines = [
        {"content": "I have a red kayak"},
        {"content": "my secret diary entry", "thread_id": "quiet"},
        {"content": "I like tea"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    code, out, err = cli_any(stack.address, "import", str(path), "--in-flight", "1")
    assert code == 1
    assert "imported 1, already present 0, refused 1" in out
    assert "line 2 refused: THREAD_MEMORY_DISABLED" in err
    assert "1 line(s) not tried" in err and "--keep-going" in err
    assert "secret" not in out + err
    assert stored(a) == ["I have a red kayak"]

    code, out, err = cli_any(stack.address, "import", str(path), "--keep-going", "--json")
    assert code == 1
    counts = json.loads(out)
    assert (counts["imported"], counts["already_present"], counts["refused"]) == (1, 1, 1)
    assert counts["not_tried"] == 0
    assert [(r["line"], r["reason"]) for r in counts["refusals"]] == [(2, "THREAD_MEMORY_DISABLED")]
    assert stored(a) == ["I have a red kayak", "I like tea"]


def test_a_file_of_memories_is_recognised_wherever_it_is_read_from(make_stack, tmp_path, cli_any):
    """A line without a source id or request id is known by what it says: the same file
    copied elsewhere, or the same line twice, is not stored twice."""
    stack = make_stack()
    first, second = tmp_path / "a.jsonl", tmp_path / "moved" / "b.jsonl"
    second.parent.mkdir()
    text = json.dumps({"content": "I like tea", "observed_at": "2025-01-01T00:00:00Z"}) + "\n"
    first.write_text(text)
    second.write_text(text + text)
    assert "imported 1, already present 0" in cli_any(stack.address, "import", str(first))[1]
    code, out, _ = cli_any(stack.address, "import", str(second))
    assert (code, "imported 0, already present 2, refused 0" in out) == (0, True)
    assert stored(stack.client()) == ["I like tea"]


def test_an_import_the_credential_may_not_make_stops_with_its_counts(
    make_stack, tmp_path, cli_any, monkeypatch
):
    """A failure that is not about a line (here the credential's scope) stops the import
    even with --keep-going: every next line would fail the same way."""
    stack = make_stack()
    path = tmp_path / "memories.jsonl"
    path.write_text("".join(json.dumps({"content": f"memory {i}"}) + "\n" for i in range(3)))
    monkeypatch.setenv("AGENTMEM_TOKEN", READER_A.token)
    code, out, err = cli_any(
        stack.address, "import", str(path), "--keep-going", "--in-flight", "1", "--json"
    )
    assert code == 1
    counts = json.loads(out)
    done = {k: counts[k] for k in ("imported", "refused", "failed", "not_tried")}
    assert done == {"imported": 0, "refused": 0, "failed": 1, "not_tried": 2}
    assert "stopped: MISSING_SCOPE" in err and "memory.write" in err
    assert stack.client().list_sources().sources == []
