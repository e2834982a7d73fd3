"""Characters a person cannot see, shown visibly wherever stored text is shown.

Format characters (zero-width characters, bidirectional controls, Unicode tag characters,
…), variation selectors and every other default-ignorable code point are invisible (or
reorder what is around them) on a screen, yet a model reads them: text can say one thing to
a person and another to a model, or make a name read backwards. Which characters those are
is decided by Unicode's own properties (general category Cf, Default_Ignorable_Code_Point,
as the `regex` package's Unicode tables give them), not by a list kept here; C0 and C1
controls but tab and line breaks are added (a terminal runs escape sequences). Every
rendering of stored text (the prompt block, Ask answers, the CLI, MCP tools, the console)
passes it through `shown`, which writes each such character as `U+XXXX`. What is stored is
never changed: a read of the memory returns exactly what was inserted.

Kept where writing systems and emoji need them, and only there:

- zero-width joiners (U+200C, U+200D) between two visible non-ASCII characters (a
  selector kept after the first counts with it); between ASCII characters they only hide
  things;
- one variation selector right after a visible non-ASCII character (an emoji's
  presentation, an ideograph's variant, a Mongolian letter's form), and U+FE0F between a
  keycap's digit, `#` or `*` and U+20E3.

Visible format characters (Prepended_Concatenation_Mark: the Arabic number sign, …) are
left as they are.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import regex

# Invisible wherever they stand: the controls, and the format and default-ignorable
# characters but the joiners, the variation selectors and the marks people see.
_ALWAYS = (
    r"[[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}]"
    r"--[\u200c\u200d\p{Variation_Selector}\p{Prepended_Concatenation_Mark}]]"
)
# A visible non-ASCII character: what a joiner or a selector may stand by.
_BASE = r"[^\x00-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}]"
_JOINER = r"[\u200c\u200d]"
_SELECTOR = r"\p{Variation_Selector}"
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


class _Patterns(NamedTuple):
    invisible: regex.Pattern[str]
    any: regex.Pattern[str]  # every one of them, wherever it stands (`without_invisible`)
    format: regex.Pattern[str]  # the quick scan: one property at a time (a set of them
    ignorable: regex.Pattern[str]  # is scanned three times slower)


@cache
def _patterns() -> _Patterns:
    """The `regex` patterns, compiled on first need: ASCII text without controls (nearly
    all text) needs none, so a process that only meets such text (the `agentmem` command
    printing a search) never imports `regex` and its Unicode tables."""
    import regex

    return _Patterns(
        invisible=regex.compile(
            rf"{_ALWAYS}"
            rf"|(?<!{_BASE}|{_BASE}{_SELECTOR}){_JOINER}|{_JOINER}(?!{_BASE})"
            rf"|(?<!{_BASE})(?!(?<=[0-9#*])\ufe0f\u20e3){_SELECTOR}",
            regex.V1,
        ),
        any=regex.compile(
            r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}"
            r"--\p{Prepended_Concatenation_Mark}]",
            regex.V1,
        ),
        format=regex.compile(r"\p{Cf}"),
        ignorable=regex.compile(r"\p{Default_Ignorable_Code_Point}"),
    )


def __getattr__(name: str) -> Any:  # the patterns by their former names, for tests
    if name == "_INVISIBLE":
        return _patterns().invisible
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _maybe(text: str) -> bool:
    """Whether `text` may hold an invisible character: ASCII text (nearly all text) can hold
    only controls; other text is scanned for each property (about 0.15 ms on a
    2,500-character reply)."""
    if _CONTROL.search(text) is not None:
        return True
    if text.isascii():
        return False
    patterns = _patterns()
    return patterns.ignorable.search(text) is not None or patterns.format.search(text) is not None


def _code(m: regex.Match[str]) -> str:
    return f"U+{ord(m.group()):04X}"


def shown(text: str) -> str:
    """`text` with every invisible character written as `U+XXXX`."""
    return _patterns().invisible.sub(_code, text) if _maybe(text) else text


def has_invisible(text: str) -> bool:
    """Whether `text` holds a character `shown` would write out."""
    return _maybe(text) and _patterns().invisible.search(text) is not None


def without_invisible(text: str) -> str:
    """`text` with every invisible character taken out, joiners and selectors included
    (what a pattern is compared on: a character inside a word hides nothing)."""
    return _patterns().any.sub("", text) if _maybe(text) else text
