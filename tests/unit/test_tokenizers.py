"""Prompt token counters: the BPE encodings are tiktoken's own, built offline from the
shipped ranks; words need nothing."""

from __future__ import annotations

import pytest
from tiktoken_ext import openai_public

from runtime_svc.adapters import tokenizers
from runtime_svc.domain import text


@pytest.mark.parametrize("name", [tokenizers.O200K, tokenizers.CL100K])
def test_encodings_are_the_ones_tiktoken_defines(monkeypatch, name):
    ranks = tokenizers.encoding(name)
    assert ranks is not None, "bpe-openai ships the ranks"
    # tiktoken's own definition, its ranks download replaced by nothing
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    spec = getattr(openai_public, name)()
    assert ranks._pat_str == spec["pat_str"]
    assert ranks._special_tokens == spec["special_tokens"]
    counter = tokenizers.counter(name)
    assert counter.name == name and not counter.fallback
    line = "Caroline: I went to the LGBTQ support group yesterday — it was so powerful!\n"
    assert counter.count(line) == len(ranks.encode_ordinary(line)) != text.count_tokens(line)


def test_words_and_unknown_encodings():
    assert tokenizers.counter("words").count("Hi, Ann.") == text.count_tokens("Hi, Ann.") == 4
    assert tokenizers.encoding("p50k_base") is None
