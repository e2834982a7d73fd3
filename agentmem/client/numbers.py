"""Whole-number options: argparse types that refuse a number a command could not use as a
usage error naming the option (exit code 2), never a traceback later. A number sent in a
request is held to its field's range, which the field's proto type decides
(`agentmem.contract.validation.field_range`: int32, int64, ...); a number the command uses
itself (a port, a count) to the range it states."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from google.protobuf.message import Message

from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError

INT64_MAX = 2**63 - 1
PORT = (0, 65_535)


def field(message: type[Message], name: str) -> Callable[[str], int]:
    """A number for the request field `name` of `message`."""
    return _option(lambda text: validation.integer(text, message, name))


def within(low: int, high: int = INT64_MAX) -> Callable[[str], int]:
    """A number the command uses itself, from `low` to `high`."""
    return _option(lambda text: validation.whole_number("value", text, low, high))


def _option(check: Callable[[str], int]) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return check(text)
        except AgentmemError as e:
            rule = e.violations[0].description if e.violations else "must be a whole number"
            raise argparse.ArgumentTypeError(rule) from None

    return parse
