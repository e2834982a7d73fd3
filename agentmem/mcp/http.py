"""`agentmem mcp --transport http`: the MCP server's streamable HTTP app, served by uvicorn
behind a guard of JSON-RPC request ids.

The SDK's transport keys a session's open requests by id (as a string): a second request
reusing the id of one still running replaces its response stream, and neither is ever
answered. `UniqueRequestIds` answers such a request at once with a JSON-RPC error (-32600)
naming its id, and lets the first go on; once a request is answered its id is free again.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.mcpserver import MCPServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_HEADER = b"mcp-session-id"
INVALID_REQUEST = -32600
# Bodies larger than this are passed on unread (the SDK refuses them itself).
MAX_INSPECTED_BODY = 4 * 1024 * 1024


class UniqueRequestIds:
    def __init__(self, app: App) -> None:
        self._app = app
        self._open: set[tuple[bytes, str]] = set()  # (session, str(request id))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = _header(scope, SESSION_HEADER) if scope["type"] == "http" else None
        if not session or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        body, replay = await _read_body(receive)
        request_id = _request_id(body)
        if request_id is None:
            await self._app(scope, replay, send)
            return
        key = (session, str(request_id))  # the SDK's own key: 7 and "7" are one request
        if key in self._open:
            await _refuse(send, request_id)
            return
        self._open.add(key)
        try:
            await self._app(scope, replay, send)
        finally:
            self._open.discard(key)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (up to MAX_INSPECTED_BODY), and a `receive` that gives the app the
    same messages again, then the connection's own."""
    messages: list[Message] = []
    size, more = 0, True
    while more and size <= MAX_INSPECTED_BODY:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        more = bool(message.get("more_body"))
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return (b"" if more else body), replay


def _request_id(body: bytes) -> object | None:
    """The id of a JSON-RPC request (not of a notification or a response), or None."""
    try:
        message = json.loads(body) if body else None
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    request_id = message.get("id")
    return request_id if isinstance(request_id, (str, int)) else None


async def _refuse(send: Send, request_id: object) -> None:
    reply = {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": INVALID_REQUEST,
            "message": "a request with this id is still in progress on this session; use a new id",
        },
    }
    body = json.dumps(reply).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 409,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


METADATA = "/.well-known/oauth-protected-resource"


def serve(server: MCPServer, host: str, port: int) -> None:
    """Serves `server` over streamable HTTP at http://host:port/mcp until interrupted."""
    import uvicorn
    from starlette.routing import Route

    app = server.streamable_http_app(host=host)
    for route in list(app.router.routes):  # RFC 9728's metadata at the root path too
        if isinstance(route, Route) and route.path.startswith(METADATA + "/"):
            app.router.add_route(METADATA, route.endpoint, methods=["GET", "OPTIONS"])
    level = str(server.settings.log_level).lower()
    uvicorn.run(UniqueRequestIds(app), host=host, port=port, log_level=level)
