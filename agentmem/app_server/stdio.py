"""JSON Lines on standard input and output: one message per line, each way.

A thread reads lines with a bounded `readline`, so a line longer than the limit is never
held whole: it is answered (-32600, reason MESSAGE_TOO_LARGE, id null), skipped to its
end, and the connection goes on. The thread waits while the session is behind, so a host
that writes faster than the gateway answers is held back rather than buffered. At the end
of input, requests in flight are answered before the bridge exits.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from agentmem.app_server import wire
from agentmem.app_server.gateway import Gateway
from agentmem.app_server.session import Session
from agentmem.app_server.wire import Limits

_TOO_LARGE = b""  # a marker: an empty line is never queued
_QUEUED = 8


async def serve(
    gateway: Gateway,
    limits: Limits,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
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
    write, done = await _writer(stdout or sys.stdout.buffer)
    session = Session(gateway, write, limits)
    try:
        while (line := await lines.get()) is not None:
            if line is _TOO_LARGE:
                await session.send(wire.too_large(limits.max_message_bytes))
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


async def _writer(
    stdout: BinaryIO,
) -> tuple[Callable[[dict[str, Any]], Awaitable[None]], Callable[[], Awaitable[None]]]:
    """A write of one message per line, waiting while the reader is behind; and the
    function that flushes and closes the output."""
    loop = asyncio.get_running_loop()
    # A duplicate of the descriptor: closing the pipe writer leaves sys.stdout open.
    pipe = os.fdopen(os.dup(stdout.fileno()), "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    except ValueError:  # a regular file: plain writes never wait long
        pipe.close()

        async def to_file(message: dict[str, Any]) -> None:
            stdout.write(wire.encode(message).encode() + b"\n")
            stdout.flush()

        async def flush() -> None:
            stdout.flush()

        return to_file, flush
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def to_pipe(message: dict[str, Any]) -> None:
        writer.write(wire.encode(message).encode() + b"\n")
        await writer.drain()

    async def close() -> None:
        await writer.drain()
        writer.close()

    return to_pipe, close
