"""Structured (JSON lines) logging. Log records carry ids, codes and timings only: never
tokens, credentials or memory text (callers pass such values nowhere near a logger).

Inside a traced call every line carries the W3C `trace_id` and `span_id` of the active span;
a caller-chosen request id (`x-request-id`) then appears as `request_id`.

Lines are formatted and written by the thread that logs them. A call's own line is logged
once its answer is on its way (`agentmem_kernel.guard`), so it costs the call nothing. Handing
lines to a writer thread instead cost more than it saved: the thread woke after each line
and took the interpreter from the next call (Search through both services 1-2% slower,
20k passages, interleaved A/B)."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

_RESERVED = set(vars(logging.makeLogRecord({})))
# (trace id, span id) of the active span, or None: the servers' tracing hands it in.
TraceIds = Callable[[], tuple[str, str] | None]


def _no_trace() -> tuple[str, str] | None:
    return None


_ENCODER = json.JSONEncoder(default=str)  # json.dumps(default=...) makes one per call


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str, trace_ids: TraceIds = _no_trace) -> None:
        super().__init__()
        self.service = service
        self.trace_ids = trace_ids
        self._stamp: tuple[int, str] = (-1, "")

    def format(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        stamp = self._stamp
        if stamp[0] != second:  # one strftime per second, not per line
            stamp = self._stamp = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        out = {
            "ts": f"{stamp[1]}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update({k: v for k, v in vars(record).items() if k not in _RESERVED})
        ids = self.trace_ids()
        if ids is not None:
            own = out.get("trace_id")
            if own and own != ids[0]:
                out["request_id"] = own
            out["trace_id"], out["span_id"] = ids
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return _ENCODER.encode(out)


def configure(
    service: str, level: str = "INFO", file: str | None = None, trace_ids: TraceIds = _no_trace
) -> logging.Handler:
    """A service's logging: JSON lines on stderr, or with `file` every line in that file
    (appended) and only warnings and errors on stderr, so that a terminal shows what needs a
    person and not one line per call. Records keep no caller location, thread or process:
    the lines never show them. `trace_ids`: the servers' tracing, so a traced call's lines
    carry its ids. Returns the handler that gets every line."""
    formatter = JsonFormatter(service, trace_ids)
    handler: logging.Handler
    handlers: list[logging.Handler] = []
    if file:
        Path(file).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(file, encoding="utf-8")
        terminal = logging.StreamHandler(sys.stderr)
        terminal.setLevel(logging.WARNING)
        terminal.setFormatter(formatter)
        handlers.append(terminal)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler, *handlers]
    root.setLevel(level)
    # The logging HOWTO's optimizations: no stack walk or lookups per record for fields
    # that no line shows.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    if sys.version_info >= (3, 12):
        logging.logAsyncioTasks = False
    return handler
