"""The one id rule (`agentmem.contract.validation.identifier`): ids that look alike are alike.
Format characters (Unicode Cf: zero-width, bidirectional overrides and isolates, the BOM,
tags), other invisible characters and spaces other than U+0020 are refused."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, Reason

INVISIBLE = [
    "\u200b",  # zero-width space
    "\u200c",  # zero-width non-joiner
    "\u200d",  # zero-width joiner
    "\u2060",  # word joiner
    "\ufeff",  # byte order mark
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u061c",  # Arabic letter mark
    "\U000e0041",  # tag latin capital A
    "\u00ad",  # soft hyphen
    "\u00a0",  # no-break space
    "\u3000",  # ideographic space
    "\u2028",  # line separator
    "\u3164",  # Hangul filler
    "\u034f",  # combining grapheme joiner
    "\ufe0f",  # variation selector 16
    "\u0085",  # next line (a C1 control)
    "\ue000",  # private use
]


@pytest.mark.parametrize("ch", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_an_invisible_character_anywhere_in_an_id_is_refused(ch):
    for value in (f"t{ch}1", f"{ch}t1", f"t1{ch}"):
        with pytest.raises(AgentmemError) as err:
            validation.identifier("thread_id", value)
        assert err.value.reason is Reason.INVALID_FIELD
        assert err.value.violations[0].field == "thread_id"
        assert ch not in err.value.message


@given(st.text(min_size=1, max_size=20))
def test_no_accepted_id_holds_a_format_character(value):
    try:
        validation.identifier("id", value)
    except AgentmemError:
        return
    assert not any(unicodedata.category(c) in ("Cf", "Cc", "Zl", "Zp") for c in value)


def test_visible_ids_in_any_script_are_accepted():
    for value in ("t1", "thread 7", "café", "スレッド", "нить-2", "a.b_c:d/e", "🦜"):
        assert validation.identifier("thread_id", value) == value
