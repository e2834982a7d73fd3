"""WebSocket: one JSON message per text frame, one session per connection.

The same listener answers `GET /readyz` and `GET /healthz` with 200. Any request carrying
an `Origin` header is refused with 403: a browser page must not reach a local memory
service. The caller's credential comes at the handshake, `Authorization: Bearer <token>`
(exactly one); the gateway vouches for it (`GetCapabilities`) before the upgrade, else 401,
and the connection then acts as that caller. A frame over the size limit closes the
connection with 1009 (message too big): the frame is refused before it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import weakref
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import serve as ws_serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agentmem.app_server import wire
from agentmem.app_server.gateway import Gateway
from agentmem.app_server.session import Session
from agentmem.app_server.wire import Limits
from agentmem.client.errors import ApiError, PermissionDenied, Unauthenticated

PROBES = ("/readyz", "/healthz")


class Listener:
    def __init__(self, gateway: Gateway, limits: Limits, allow_person: bool = False) -> None:
        self._gateway = gateway
        self._limits = limits
        self._allow_person = allow_person  # else a person's credential fails `initialize`
        self._tokens: weakref.WeakKeyDictionary[ServerConnection, str] = weakref.WeakKeyDictionary()

    async def serve(self, sock: socket.socket, ready: Callable[[int], None]) -> None:
        """Serves on a listening socket (`agentmem.process.listen.bind`) until cancelled;
        `ready(port)` once the listener accepts connections."""
        async with ws_serve(
            self._connection,
            sock=sock,
            process_request=self._admit,
            max_size=self._limits.max_message_bytes,
        ) as server:
            ready(server.sockets[0].getsockname()[1])
            await asyncio.Future()  # until cancelled

    async def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        if "Origin" in request.headers:
            return connection.respond(HTTPStatus.FORBIDDEN, "browser origins are refused\n")
        if urlsplit(request.path).path in PROBES:
            return connection.respond(HTTPStatus.OK, "ok\n")
        given = request.headers.get_all("Authorization")
        scheme, _, token = given[0].partition(" ") if len(given) == 1 else ("", "", "")
        if scheme.lower() != "bearer" or not token.strip():
            return _unauthorized(connection)
        try:
            await self._gateway.acting_as(token.strip()).capabilities()
        except Unauthenticated:
            return _unauthorized(connection)
        except PermissionDenied:
            return connection.respond(HTTPStatus.FORBIDDEN, "the credential may not read memory\n")
        except ApiError:
            return connection.respond(
                HTTPStatus.SERVICE_UNAVAILABLE, "the gateway is unavailable\n"
            )
        self._tokens[connection] = token.strip()
        return None

    async def _connection(self, connection: ServerConnection) -> None:
        async def send(message: dict[str, Any]) -> None:
            with contextlib.suppress(ConnectionClosed):  # gone: the receive loop ends it
                await connection.send(wire.encode(message))

        token = self._tokens.pop(connection)
        session = Session(self._gateway.acting_as(token), send, self._limits, self._allow_person)
        try:
            async for frame in connection:
                await session.receive(frame)
        except ConnectionClosed:
            pass
        finally:
            await session.close(drain=False)


def _unauthorized(connection: ServerConnection) -> Response:
    response = connection.respond(HTTPStatus.UNAUTHORIZED, "a bearer token is required\n")
    response.headers["WWW-Authenticate"] = "Bearer"
    return response
