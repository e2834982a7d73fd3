"""A conversation's stored form decodes to the same values whichever decoder takes it."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.domain import stored_json

# Any code point, lone surrogates included (which orjson refuses: the standard library
# decodes them).
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
rows = st.lists(
    st.tuples(st.sampled_from(["user", "assistant"]), any_text, any_text, st.integers(0, 2**62)),
    max_size=6,
)


@given(rows)
def test_a_stored_form_decodes_as_the_standard_library_decodes_it(messages):
    raw = json.dumps([list(m) for m in messages], ensure_ascii=False)
    assert stored_json.loads(raw) == json.loads(raw)


def test_a_lone_surrogate_is_decoded_not_refused():
    raw = json.dumps([["user", "broken \ud800 text", "", 0]], ensure_ascii=False)
    assert stored_json.loads(raw) == [["user", "broken \ud800 text", "", 0]]
