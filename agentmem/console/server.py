"""`agentmem console`: serve the console with uvicorn, over TLS when given a certificate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import uvicorn

from agentmem.console.app import create_app
from agentmem.console.gateway import Gateway
from agentmem.process import listen as listening


def _split(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65_535:
        raise SystemExit(f"agentmem: --listen must be HOST:PORT, not {listen!r}")
    return host.strip("[]"), int(port)


def run(
    listen: str,
    gateway_address: str,
    *,
    gateway_ca: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    secure_cookies: bool = False,
    port_file: str | None = None,
) -> int:
    host, port = _split(listen)
    ca = Path(gateway_ca).read_bytes() if gateway_ca else None
    tls = bool(tls_cert and tls_key)
    app = create_app(Gateway(gateway_address, ca), secure_cookies=tls or secure_cookies)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        ssl_certfile=tls_cert if tls else None,
        ssl_keyfile=tls_key if tls else None,
        log_level="warning",
        access_log=False,  # paths carry source ids only, but keep the log to errors
        server_header=False,
    )
    server = uvicorn.Server(config)
    try:  # bound here, without SO_REUSEPORT: a taken port is refused in one line
        sock = listening.bind(listen, "console")
    except listening.AddressInUse as e:
        listening.refuse(e)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            bound = server.servers[0].sockets[0].getsockname()[1]
            scheme = "https" if tls else "http"
            if port_file:
                listening.announce(port_file, bound)
            print(f"agentmem console on {scheme}://{host}:{bound}/", flush=True)
        await task

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has shut down; end quietly, as it said
        return 0
    return 0
