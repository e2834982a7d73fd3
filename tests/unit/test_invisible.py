"""`agentmem.contract.invisible`: what a person cannot see is written as U+XXXX wherever stored
text is shown (the prompt block, Ask, the CLI, MCP tool results, the console)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentmem.contract import invisible
from agentmem.contract.invisible import has_invisible, shown
from agentmem.mcp_toolbox import visible


def test_bidi_zero_width_and_tag_characters_are_written_out():
    assert shown("a\u202eb\u202cc") == "aU+202EbU+202Cc"
    assert shown("x\u200by\ufeffz\u2066w\u2069") == "xU+200ByU+FEFFzU+2066wU+2069"
    assert shown("hi\U000e0049\U000e0067\U000e007f") == "hiU+E0049U+E0067U+E007F"
    assert shown("\x1b[31mred") == "U+001B[31mred"  # a terminal would run it


def test_joiners_stay_where_scripts_and_emoji_need_them():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert shown(family) == family and shown(persian) == persian
    assert shown("ign\u200dore") == "ignU+200Dore" and shown("\u200d") == "U+200D"


def test_ordinary_text_is_unchanged():
    text = "Caroline: I went to the café — 🎨 «great»\ttab\nnew line, ĳ, 日本語"
    assert shown(text) == text and not has_invisible(text)


@given(st.text())
def test_nothing_invisible_is_left(text):
    out = shown(text)
    assert not has_invisible(out)
    assert shown(out) == out  # showing twice changes nothing


def test_mcp_tool_results_are_shown_visibly_in_every_string():
    result = {"hits": [{"snippet": "pin \u202e4321", "score": 1.0}], "id": "src_1"}
    assert visible(result) == {"hits": [{"snippet": "pin U+202E4321", "score": 1.0}], "id": "src_1"}


@given(
    st.text(
        st.one_of(
            st.characters(exclude_categories=("Cs",)),
            st.sampled_from("\u200c\u200d\u200b\u202e\U000e0041\x07é"),
        ),
        max_size=40,
    )
)
def test_text_shown_as_is_after_the_quick_scan_is_text_with_nothing_to_show(raw):
    # The quick scan passes text on unchanged only where the full pattern finds nothing.
    full = invisible._INVISIBLE.sub(lambda m: f"U+{ord(m.group()):04X}", raw)
    assert invisible.shown(raw) == full
