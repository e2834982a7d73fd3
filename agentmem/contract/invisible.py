"""Characters a person cannot see, shown visibly wherever stored text is shown.

Zero-width characters, bidirectional controls and Unicode tag characters are invisible (or
reorder what is around them) on a screen, yet a model reads them: text can say one thing to
a person and another to a model, or make a name read backwards. Every rendering of stored
text (the prompt block, Ask answers, the CLI, MCP tools, the console) passes it through
`shown`, which writes each such character as `U+XXXX`. What is stored is never changed:
a read of the memory returns exactly what was inserted.

Zero-width joiners (U+200C, U+200D) are kept between two non-ASCII characters, where scripts
and emoji sequences need them; between ASCII characters they only hide things.
"""

from __future__ import annotations

import re

# C0/C1 controls but tab and line breaks (a terminal runs escape sequences), zero-width
# and invisible format characters, bidirectional controls, tag characters, interlinear
# annotation.
_ALWAYS = (
    "\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f"
    "\u00ad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U000e0000-\U000e007f"
)
_JOINERS = "\u200c\u200d"
_INVISIBLE = re.compile(
    f"[{_ALWAYS}]|(?<![^\\x00-\\x7f])[{_JOINERS}]|[{_JOINERS}](?![^\\x00-\\x7f])"
)


# Any of those characters, wherever it stands: text without one (nearly all text) is shown
# as it is after one quick scan (the pattern above looks around every joiner it meets).
_ANY = re.compile(f"[{_ALWAYS}{_JOINERS}]")


def shown(text: str) -> str:
    """`text` with every invisible character written as `U+XXXX`."""
    if _ANY.search(text) is None:
        return text
    return _INVISIBLE.sub(lambda m: f"U+{ord(m.group()):04X}", text)


def has_invisible(text: str) -> bool:
    """Whether `text` holds a character `shown` would write out (the quick scan first:
    the whole pattern costs about 80 ns a character, 0.2 ms on a 2,500-character reply)."""
    return _ANY.search(text) is not None and _INVISIBLE.search(text) is not None
