"""The parts of a long message: cut at paragraph and code-block boundaries, never inside a
code block unless it alone is over the limit."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.assembly.message_parts import Part, best_part, parts

CODE = "```python\n" + "".join(f"x{i} = {i}\n" for i in range(40)) + "```\n"


def test_a_short_message_is_one_part_and_never_cut():
    assert parts("short reply", 100) == (Part(0, 11),)
    assert best_part("short reply", ["repli"], 100) is None


def test_a_code_block_is_never_cut_when_it_fits():
    text = "intro paragraph\n\n" + CODE + "\nclosing words about the parser\n"
    found = parts(text, len(CODE) + 5)
    inside = [(p.start, p.end) for p in found]
    start = text.index("```")
    end = text.index("```\n", start + 3) + 4
    assert any(a <= start and end <= b for a, b in inside), inside


def test_a_code_block_over_the_limit_is_cut_between_lines():
    found = parts(CODE, 60)
    assert all(p.end - p.start <= 60 for p in found)
    assert all(CODE[p.end - 1] == "\n" for p in found[:-1])


def test_the_best_part_is_the_one_sharing_the_query_words():
    text = "alpha words here\n\n" * 30 + "the sqlite migration failed\n\n" + "beta words\n\n" * 30
    p = best_part(text, ["sqlite", "migrat"], 200)
    assert p is not None and "sqlite migration" in text[p.start : p.end]


@given(st.lists(st.sampled_from(["word ", "\n", "\n\n", "```\n", "code()\n"]), max_size=300))
def test_parts_cover_the_message_in_order_within_the_limit(pieces):
    text = "".join(pieces)
    found = parts(text, 50)
    if len(text) <= 50:
        assert found == (Part(0, len(text)),)
        return
    assert all(p.end - p.start <= 50 for p in found)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))
    assert all(not text[a.end : b.start].strip() for a, b in itertools.pairwise(found))


def test_a_passage_indexes_its_neighbours_by_their_characters_nearest_it():
    from runtime_svc.domain.passages import CONTEXT_CHARS, Window, derive
    from runtime_svc.domain.sources import Message

    reply = "early words " * 200 + "the closing advice"
    messages = [
        Message("assistant", reply),
        Message("user", "thanks, what next?"),
        Message("assistant", "the opening line " + "later words " * 200),
    ]
    user_passage = next(
        p for p in derive(messages, Window()) if p.range.start == 0 and p.range.end == 2
    )
    assert "the closing advice" in user_passage.text  # the end of the reply before it
    assert "the opening line" in user_passage.text  # the start of the reply after it
    assert "thanks, what next?" in user_passage.text  # its own message whole
    assert len(user_passage.text) < 2 * CONTEXT_CHARS + 100


def test_a_passage_is_embedded_from_the_text_it_is_indexed_from():
    from runtime_svc.domain.passages import Window, derive, indexed_text
    from runtime_svc.domain.sources import Message

    messages = [
        Message("user" if i % 2 else "assistant", ("why? " if i % 3 == 0 else "") + "w " * 500)
        for i in range(9)
    ]
    for p in derive(messages, Window()):
        assert indexed_text(messages, p.range, Window()) == p.text
