"""Structured (JSON lines) logging. Log records carry ids, codes and timings only: never
tokens, credentials or memory text (callers pass such values nowhere near a logger).

Inside a traced call every line carries the W3C `trace_id` and `span_id` of the active span;
a caller-chosen request id (`x-request-id`) then appears as `request_id`.

The services format and write their lines on a thread of their own (the logging cookbook's
queue handler and listener): a call only queues its line, instead of formatting and writing
it before its answer (about a third of the gateway's own work per call)."""

from __future__ import annotations

import atexit
import json
import logging
import queue
import sys
import time
from logging.handlers import QueueHandler, QueueListener

from agentmem.core.tracing import current_ids

_SPAN = "agentmem_span"  # the (trace id, span id) of the caller, kept on a deferred record
_RESERVED = set(vars(logging.makeLogRecord({}))) | {_SPAN}
_ENCODER = json.JSONEncoder(default=str)  # json.dumps(default=...) makes one per call


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service
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
        ids = record.__dict__[_SPAN] if _SPAN in record.__dict__ else current_ids()
        if ids is not None:
            own = out.get("trace_id")
            if own and own != ids[0]:
                out["request_id"] = own
            out["trace_id"], out["span_id"] = ids
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return _ENCODER.encode(out)


class _Deferred(QueueHandler):
    """Queues a record as it is, with the caller's span (the writer thread has none);
    formatting waits for the writer."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        record.__dict__[_SPAN] = current_ids()
        return record


def configure(service: str, level: str = "INFO") -> QueueListener:
    """A service's logging: JSON lines on stderr, written by a thread of their own (stopped,
    every queued line written, at exit or by `stop()` on what this returns). Records keep
    no caller location, thread or process: the lines never show them."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    lines: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    writer = QueueListener(lines, handler)
    root = logging.getLogger()
    root.handlers[:] = [_Deferred(lines)]
    root.setLevel(level)
    # The logging HOWTO's optimizations: no stack walk or lookups per record for fields
    # that no line shows.
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    logging.logAsyncioTasks = False  # type: ignore[attr-defined]  (Python 3.12 on)
    writer.start()
    atexit.register(writer.stop)
    return writer
