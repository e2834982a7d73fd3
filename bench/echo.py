"""A bare two-hop gRPC echo (client → front → back), the floor for a call through both
services: the same framework, the same process layout, no work. Run as a process:

    python bench/echo.py back --port-file F
    python bench/echo.py front --backend HOST:PORT --port-file F
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import grpc

METHOD = "/bench.Echo/Echo"


def _identity(b: bytes) -> bytes:
    return b


async def serve(role: str, backend: str | None, port_file: str) -> None:
    channel = grpc.aio.insecure_channel(backend) if backend else None
    forward = channel.unary_unary(METHOD, _identity, _identity) if channel else None

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        if forward is not None:
            return await forward(request, timeout=context.time_remaining() or 10)
        return request

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo, _identity, _identity)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    Path(port_file + ".tmp").write_text(str(port))
    Path(port_file + ".tmp").replace(port_file)  # whole when it appears
    await server.wait_for_termination()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["front", "back"])
    p.add_argument("--backend")
    p.add_argument("--port-file", required=True)
    a = p.parse_args()
    asyncio.run(serve(a.role, a.backend, a.port_file))


if __name__ == "__main__":
    main()
