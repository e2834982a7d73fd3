"""JSON Lines on standard input and output: one message per line, each way.

A thread reads lines with a bounded `readline`, so a line longer than the limit is never
held whole: it is skipped to its end unread and logged, and the connection goes on (its
id is unread, and an answer without one is not a message Codex admits). The thread waits
while the session is behind, so a host that writes faster than the gateway answers is
held back rather than buffered. At the end of input, requests in flight are answered
before the bridge exits. A host that stops reading (closes the bridge's output) ends the
bridge: one log line, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from agentmem.app_server import wire
from agentmem.app_server.gateway import Gateway
from agentmem.app_server.session import Session
from agentmem.app_server.wire import Limits

log = logging.getLogger("agentmem.app_server")
_GONE = (BrokenPipeError, ConnectionResetError)

_TOO_LARGE = b""  # a marker: an empty line is never queued
_QUEUED = 8


async def serve(
    gateway: Gateway,
    limits: Limits,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    allow_person: bool = False,
) -> None:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=_QUEUED)
    reader = threading.Thread(
        target=_read,
        args=(stdin or sys.stdin.buffer, limits.max_message_bytes, loop, lines),
        name="app-server-stdin",
        daemon=True,  # a blocked read must not keep the process alive
    )
    reader.start()
    output = _Output()
    write, done = await _writer(stdout or sys.stdout.buffer, output)
    session = Session(gateway, write, limits, allow_person)
    try:
        while not output.gone and (line := await lines.get()) is not None:
            if line is _TOO_LARGE:
                log.warning(
                    "message dropped",
                    extra={"why": "over the size limit", "limit_bytes": limits.max_message_bytes},
                )
            else:
                await session.receive(line)
        await session.close()
    finally:
        await done()


def _read(
    stream: BinaryIO,
    limit: int,
    loop: asyncio.AbstractEventLoop,
    lines: asyncio.Queue[bytes | None],
) -> None:
    def put(item: bytes | None) -> None:
        asyncio.run_coroutine_threadsafe(lines.put(item), loop).result()

    try:
        while line := stream.readline(limit + 1):
            if len(line) > limit and not line.endswith(b"\n"):
                while (rest := stream.readline(limit + 1)) and not rest.endswith(b"\n"):
                    pass  # the rest of the over-size line, dropped as it comes
                put(_TOO_LARGE)
            elif line.strip():
                put(line)
        put(None)
    except (RuntimeError, OSError, ValueError):  # the loop or the stream closed under us
        return


class _Output:
    """Whether the host still reads: the first failed write says it stopped, once."""

    def __init__(self) -> None:
        self.gone = False

    def lost(self) -> None:
        if not self.gone:
            self.gone = True
            log.warning("the host stopped reading; the bridge ends")


async def _writer(
    stdout: BinaryIO, output: _Output
) -> tuple[Callable[[dict[str, Any]], Awaitable[None]], Callable[[], Awaitable[None]]]:
    """A write of one message per line, waiting while the reader is behind; and the
    function that flushes and closes the output. Once the host stops reading, writes are
    dropped."""
    loop = asyncio.get_running_loop()
    # A duplicate of the descriptor: closing the pipe writer leaves sys.stdout open.
    pipe = os.fdopen(os.dup(stdout.fileno()), "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    except ValueError:  # a regular file: plain writes never wait long
        pipe.close()

        async def to_file(message: dict[str, Any]) -> None:
            if output.gone:
                return
            try:
                stdout.write(wire.encode(message).encode() + b"\n")
                stdout.flush()
            except _GONE:
                output.lost()

        async def flush() -> None:
            if not output.gone:
                with contextlib.suppress(*_GONE):
                    stdout.flush()

        return to_file, flush
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def to_pipe(message: dict[str, Any]) -> None:
        if output.gone:
            return
        try:
            writer.write(wire.encode(message).encode() + b"\n")
            await writer.drain()
        except _GONE:
            output.lost()

    async def close() -> None:
        with contextlib.suppress(*_GONE):
            if not output.gone:
                await writer.drain()
            writer.close()

    return to_pipe, close
