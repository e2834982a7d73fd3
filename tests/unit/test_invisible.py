"""`agentmem.contract.invisible`: what a person cannot see is written as U+XXXX wherever stored
text is shown (the prompt block, Ask, the CLI, MCP tool results, the console)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmem.contract import invisible
from agentmem.contract.invisible import has_invisible, shown, without_invisible
from agentmem.mcp.toolbox import visible


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


# Invisible by Unicode's own properties (general category Cf, Default_Ignorable_Code_Point),
# not on a hand list: each range's first and last code point, between ASCII letters.
UNLISTED = [
    (0xFE00, 0xFE0F),  # variation selectors
    (0xE0100, 0xE01EF),  # variation selectors supplement
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x180B, 0x180D),  # Mongolian free variation selectors
    (0x180F, 0x180F),
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x1D173, 0x1D17A),  # musical symbol format characters
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
]


@pytest.mark.parametrize(
    "code", sorted({c for first, last in UNLISTED for c in (first, last)}), ids=lambda c: f"{c:04X}"
)
def test_every_format_and_default_ignorable_character_is_written_out(code):
    text = f"ig{chr(code)}nore"
    assert shown(text) == f"igU+{code:04X}nore" and has_invisible(text)
    assert without_invisible(text) == "ignore"


def test_variation_selectors_stay_where_emoji_and_ideographs_need_them():
    kept = [
        "I \u2764\ufe0f tea",  # red heart, emoji presentation
        "\u845b\U000e0100 city",  # an ideographic variation sequence
        "press 1\ufe0f\u20e3",  # a keycap
        "\U0001f441\ufe0f\u200d\U0001f5e8",  # eye in speech bubble: a joiner after a selector
    ]
    for text in kept:
        assert shown(text) == text and not has_invisible(text), text
    assert shown("\u2764\ufe0f\ufe0f") == "\u2764\ufe0fU+FE0F"  # one selector per character
    assert shown("\ufe0f") == "U+FE0F" and shown("a\u200d\u200d\u00e9") == "aU+200DU+200D\u00e9"


def test_visible_format_characters_are_left_alone():
    number_sign = "\u0600\u0661\u0662"  # Arabic number sign: a prepended mark people see
    assert shown(number_sign) == number_sign


def test_without_invisible_takes_out_every_one_joiners_included():
    assert without_invisible("a\u200bb\u202ec\ufe0fd\u200de\U000e0041") == "abcde"
    assert without_invisible("\u2764\ufe0f") == "\u2764"


def test_ascii_text_takes_the_quick_path_and_still_shows_controls():
    assert shown("plain ascii text") == "plain ascii text"
    assert shown("bell\x07 and\ttab\r\n") == "bellU+0007 and\ttab\r\n"
