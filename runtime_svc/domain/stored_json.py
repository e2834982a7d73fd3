"""Decoding a conversation's stored form (a JSON array of its messages) fast: every search
hit and prompt block of a long session reads the whole session, hundreds of kilobytes, and
orjson decodes it in a quarter of the standard library's time. Anything orjson refuses
(text that is not valid UTF-8, such as a lone surrogate) is decoded by the standard
library. Both give the same values for every form the runtime stores (its numbers are
timestamps within 64 bits; orjson would turn a larger integer into a float)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(raw: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
