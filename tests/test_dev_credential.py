"""`agentmem up` keeps two credentials in the data directory and reuses them: the person's
(every scope) and an agent's for hosts (read and save, nothing the person decides)."""

from __future__ import annotations

import os
import re
import stat

import pytest

from agentmem.client import NO_RETRY, Client
from agentmem.client.errors import MissingScope
from agentmem_launcher import dev_credential
from tests.harness import Process

FRESH = {"AGENTMEM_DEV_TOKEN": "", "AGENTMEM_DEV_AGENT_TOKEN": ""}


def _up(tmp_path, data, *extra: str) -> tuple[Process, list[str]]:
    proc = Process(
        ["up", "--listen", "127.0.0.1:0", "--data-dir", str(data), *extra], FRESH, tmp_path, "up"
    )
    return proc, [proc.proc.stdout.readline().decode() for _ in range(4)]


def test_up_reuses_both_credentials_across_restarts(tmp_path):
    data = tmp_path / "data"
    first, lines = _up(tmp_path, data)
    try:
        token = re.search(r"AGENTMEM_TOKEN=(\S+)", lines[2]).group(1)
        path, agent_path = data.resolve() / "dev-token", data.resolve() / "agent-token"
        assert lines[1].startswith("your credential, for the CLI and the console")
        assert f"kept in {path}" in lines[1] and "new" in lines[1]
        assert lines[3].startswith("an agent's credential, for hosts")
        assert f"kept in {agent_path}" in lines[3] and "new" in lines[3]
        assert path.read_text().strip() == token
        agent = agent_path.read_text().strip()
        assert agent.startswith("am_agent_") and agent != token and agent not in "".join(lines)
        for kept in (path, agent_path):
            assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    finally:
        assert first.terminate() == 0
    second, lines = _up(tmp_path, data)
    try:
        assert "reused" in lines[1] and "reused" in lines[3]
        assert re.search(r"AGENTMEM_TOKEN=(\S+)", lines[2]).group(1) == token
        with Client(second.address, token, retry=NO_RETRY) as c:  # the saved token still works
            assert c.read_thread_memory_mode(thread_id="t1").revision == 0
        with Client(second.address, agent, retry=NO_RETRY) as c:
            assert c.read_thread_memory_mode(thread_id="t1").revision == 0
    finally:
        assert second.terminate() == 0


def test_the_agents_credential_searches_and_saves_and_decides_nothing(tmp_path):
    data = tmp_path / "data"
    up, _ = _up(tmp_path, data)
    person_token = (data / "dev-token").read_text().strip()
    agent_token = (data / "agent-token").read_text().strip()
    try:
        with (
            Client(up.address, agent_token, retry=NO_RETRY) as agent,
            Client(up.address, person_token, retry=NO_RETRY) as person,
        ):
            caller = agent.get_capabilities().caller
            assert (caller.principal_id, caller.principal_kind) == ("dev-agent", "agent")
            assert set(caller.scopes) == {"memory.read", "memory.write"}
            assert list(caller.trusted_save_intents) == ["client_auto_save"]
            assert person.get_capabilities().caller.principal_kind == "user"
            person.set_insert_policy(insert_policy="review_pending", expected_revision=0)
            # The agent saves; what it says the user asked for waits for the person.
            saved = agent.insert_memory(
                content="I have a yellow Squier Tele", save_intent="explicit_user_request"
            )
            assert saved.save_intent_held and saved.status == 2
            assert agent.search_memories(query="Squier").hits == []
            with pytest.raises(MissingScope):  # its own approval is not its to give
                agent.review_memory(
                    source_id=saved.source_id, decision="approve", expected_revision=1
                )
            with pytest.raises(MissingScope):
                agent.set_insert_policy(insert_policy="permissive", expected_revision=1)
            with pytest.raises(MissingScope):
                agent.set_thread_memory_mode(thread_id="t1", mode="disabled", expected_revision=0)
            with pytest.raises(MissingScope):
                agent.erase_source(source_id=saved.source_id, expected_revision=1)
            with pytest.raises(MissingScope):  # no pending text reaches a model
                agent.get_source(source_id=saved.source_id, include_content=True)
            person.review_memory(source_id=saved.source_id, decision="approve", expected_revision=1)
            assert [h.source_id for h in agent.search_memories(query="Squier").hits] == [
                saved.source_id
            ]
    finally:
        assert up.terminate() == 0


def test_rotation_and_the_environment(tmp_path, monkeypatch):
    for kind in (dev_credential.PERSON, dev_credential.AGENT):
        monkeypatch.delenv(kind.env, raising=False)
    person, agent = dev_credential.both(tmp_path)
    assert person.minted and agent.minted and person.token != agent.token
    assert dev_credential.both(tmp_path) == (
        dev_credential.DevCredential(person.token, person.path, False, dev_credential.PERSON),
        dev_credential.DevCredential(agent.token, agent.path, False, dev_credential.AGENT),
    )
    rotated, rotated_agent = dev_credential.both(tmp_path, rotate=True)
    assert rotated.minted and rotated.token != person.token
    assert rotated_agent.minted and rotated_agent.token != agent.token
    assert (tmp_path / "dev-token").read_text().strip() == rotated.token
    assert (tmp_path / "agent-token").read_text().strip() == rotated_agent.token
    for name in ("dev-token", "agent-token"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
    monkeypatch.setenv(dev_credential.PERSON.env, "chosen-token")
    monkeypatch.setenv(dev_credential.AGENT.env, "chosen-agent-token")
    chosen, chosen_agent = dev_credential.both(tmp_path, rotate=True)
    assert (chosen.token, chosen.path) == ("chosen-token", None)
    assert (chosen_agent.token, chosen_agent.path) == ("chosen-agent-token", None)
    assert (tmp_path / "dev-token").read_text().strip() == rotated.token  # untouched
    assert "AGENTMEM_DEV_TOKEN" in dev_credential.describe(chosen)
    assert "AGENTMEM_DEV_AGENT_TOKEN" in dev_credential.describe(chosen_agent)
    monkeypatch.setenv(dev_credential.AGENT.env, "chosen-token")  # an agent is not the person
    with pytest.raises(ValueError, match="must differ"):
        dev_credential.both(tmp_path)


def test_the_gateways_keys_name_each_credential_by_its_hash_only():
    person = dev_credential.DevCredential("am_dev_x", None, False, dev_credential.PERSON)
    agent = dev_credential.DevCredential("am_agent_y", None, False, dev_credential.AGENT)
    keys = [dev_credential.api_key(c) for c in (person, agent)]
    assert [(k["principal"], k["kind"]) for k in keys] == [("dev", "user"), ("dev-agent", "agent")]
    assert keys[1]["scopes"] == ["memory.read", "memory.write"]
    assert keys[1]["trusted_save_intents"] == ["client_auto_save"]
    assert "am_dev_x" not in str(keys) and "am_agent_y" not in str(keys)
