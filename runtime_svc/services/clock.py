"""Wall-clock time in integer microseconds since the Unix epoch."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]


def system_clock() -> int:
    return time.time_ns() // 1000
