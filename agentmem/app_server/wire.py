"""JSON-RPC 2.0 shapes without the `"jsonrpc"` field, as Codex's app-server speaks them.

A request is `{id, method, params?}`, a notification `{method, params?}`, a response
`{id, result}` or `{id, error: {code, message, data?}}`; ids are strings or integers. A
`"jsonrpc"` member is accepted and ignored. A frame that is not JSON is answered with
-32700, one that is not such a message with -32600 (id null when it has no usable id).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
OVERLOADED = -32001

RequestId = str | int


@dataclass(frozen=True)
class Limits:
    """Per connection: the largest message (a line or a frame), and how many requests may
    be unanswered at once."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_in_flight: int = 64


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class RpcFailure(Exception):
    """An error answer. `message` and `data` never carry what the caller sent."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


class Malformed(RpcFailure):
    """The frame is not a message; `id` is its id when it had a usable one."""

    def __init__(self, code: int, message: str, id: RequestId | None = None) -> None:
        super().__init__(code, message)
        self.id = id


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass(frozen=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True)
class Reply:
    """A response from the client (the bridge sends no requests: it is ignored)."""

    id: RequestId


Incoming = Request | Notification | Reply


def _id(value: Any) -> RequestId | None:
    # bool is an int in Python, not an id in JSON-RPC
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def parse(frame: bytes | str) -> Incoming:
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise Malformed(PARSE_ERROR, "Parse error") from None
    if not isinstance(message, dict):
        raise Malformed(INVALID_REQUEST, "Invalid request: expected a JSON object")
    has_id = "id" in message
    request_id = _id(message.get("id"))
    if has_id and request_id is None:
        raise Malformed(INVALID_REQUEST, "Invalid request: id must be a string or an integer")
    method = message.get("method")
    if isinstance(method, str):
        params = message.get("params")
        if request_id is None:
            return Notification(method, params)
        return Request(request_id, method, params)
    if request_id is not None and ("result" in message or "error" in message):
        return Reply(request_id)
    raise Malformed(INVALID_REQUEST, "Invalid request: method must be a string", request_id)


def response(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def error(request_id: RequestId | None, failure: RpcFailure) -> dict[str, Any]:
    return {"id": request_id, "error": failure.error()}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"method": method, "params": params}


def encode(message: dict[str, Any]) -> str:
    return _ENCODER.encode(message)


def too_large(limit: int) -> dict[str, Any]:
    """The answer to a frame over the size limit (its id unread: null)."""
    failure = RpcFailure(
        INVALID_REQUEST,
        f"Message too large: the limit is {limit} bytes",
        {"reason": "MESSAGE_TOO_LARGE", "limitBytes": limit},
    )
    return error(None, failure)
